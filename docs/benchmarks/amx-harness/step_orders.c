// Session 25's AMX harness (not kiln code): four orders of one step's tile loads and products,
// over STEPS steps of operands held in L1 (8) or L2 (64).
//   gcc -O2 -mamx-tile -mamx-bf16 step_orders.c -o /tmp/step_orders && /tmp/step_orders STEPS
#include <immintrin.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <time.h>
#include <sys/syscall.h>
#include <unistd.h>
typedef struct { uint8_t p, s; uint8_t r[14]; uint16_t cb[16]; uint8_t rows[16]; } __attribute__((aligned(64))) cfg_t;
static double now(){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+t.tv_nsec*1e-9;}
int main(int argc,char**argv){
  syscall(SYS_arch_prctl,0x1023,18); cfg_t c; memset(&c,0,64); c.p=1; for(int t=0;t<8;t++){c.cb[t]=64;c.rows[t]=16;} _tile_loadconfig(&c);
  int steps=argc>1?atoi(argv[1]):8; // steps cycling through this many 4KB (L1)
  uint16_t*A=aligned_alloc(64,steps*2048),*B=aligned_alloc(64,steps*2048);
  for(int i=0;i<steps*1024;i++){A[i]=0x3f80;B[i]=0x3f80;}
  long iters=2000000;
  for(int v=0;v<4;v++){ double best=1e9;
   for(int r=0;r<5;r++){ double t=now();
    for(long it=0;it<iters/steps;it++){ const uint16_t*a=A,*b=B;
     for(int s=0;s<steps;s++){
      if(v==0){_tile_loadd(4,a,64);_tile_loadd(5,a+512,64);_tile_loadd(6,b,128);_tile_loadd(7,b+32,128);
        _tile_dpbf16ps(0,4,6);_tile_dpbf16ps(1,4,7);_tile_dpbf16ps(2,5,6);_tile_dpbf16ps(3,5,7);}
      else if(v==1){_tile_loadd(4,a,64);_tile_loadd(6,b,128);_tile_dpbf16ps(0,4,6);_tile_loadd(7,b+32,128);_tile_dpbf16ps(1,4,7);
        _tile_loadd(5,a+512,64);_tile_dpbf16ps(2,5,6);_tile_dpbf16ps(3,5,7);}
      else if(v==2){_tile_loadd(6,b,128);_tile_loadd(4,a,64);_tile_dpbf16ps(0,4,6);_tile_loadd(5,a+512,64);_tile_dpbf16ps(2,5,6);
        _tile_loadd(7,b+32,128);_tile_dpbf16ps(1,4,7);_tile_dpbf16ps(3,5,7);}
      else { // 1x2 with B double buffer? use acc 0,1 ; A in 4/5 alternating
        _tile_loadd(4,a,64);_tile_dpbf16ps(0,4,6);_tile_dpbf16ps(1,4,7);_tile_loadd(5,a+512,64);_tile_dpbf16ps(2,5,6);_tile_dpbf16ps(3,5,7);}
      a+=1024;b+=1024;}}
    t=now()-t; if(t<best)best=t;}
   printf("steps=%d v=%d: %.1f GFLOP/s\n",steps,v,iters/steps*steps*4*16384.0/best/1e9);}
}
