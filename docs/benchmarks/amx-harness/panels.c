// Session 25's AMX harness (not kiln code): one core runs 2 × 2-tile steps over A and B panels
// of CS steps each (2 KiB a step each), cycling AP panels of A and BP of B, so that the working
// set sits in L1 or L2; CLOAD loads and stores the accumulators per block. PF prefetches (PFB:
// B too) PF steps ahead.
//   gcc -O2 -DPF=0 -DPFB=0 -mamx-tile -mamx-bf16 panels.c -o /tmp/panels && /tmp/panels CS AP BP CLOAD
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
// apanels: number of distinct A panels cycled (each cs steps), bpanels likewise; cload: C load/store per block
int main(int argc,char**argv){
  syscall(SYS_arch_prctl,0x1023,18); cfg_t c; memset(&c,0,64); c.p=1; for(int t=0;t<8;t++){c.cb[t]=64;c.rows[t]=16;} _tile_loadconfig(&c);
  int cs=atoi(argv[1]), ap=atoi(argv[2]), bp=atoi(argv[3]), cl=atoi(argv[4]);
  uint16_t*A=aligned_alloc(64,(size_t)ap*cs*2048),*B=aligned_alloc(64,(size_t)bp*cs*2048); float*C=aligned_alloc(64,4096*64);
  for(size_t i=0;i<(size_t)ap*cs*1024;i++)A[i]=0x3f80; for(size_t i=0;i<(size_t)bp*cs*1024;i++)B[i]=0x3f80; memset(C,0,4096*64);
  long blocks=200000/cs; double best=1e9;
  for(int r=0;r<5;r++){ double t=now();
   for(long x=0;x<blocks;x++){ int i=x%ap, j=(x/ap)%bp; float*cb=C+(x%64)*1024;
    const uint16_t*a=A+(size_t)i*cs*1024,*b=B+(size_t)j*cs*1024;
    if(cl){_tile_loadd(0,cb,128);_tile_loadd(1,cb+16,128);_tile_loadd(2,cb+512,128);_tile_loadd(3,cb+528,128);}
    else {_tile_zero(0);_tile_zero(1);_tile_zero(2);_tile_zero(3);}
    for(int s=0;s<cs;s++){
      if(PF){ const char*pa=(const char*)(a+PF*1024); for(int l=0;l<32;l++) _mm_prefetch(pa+64*l,_MM_HINT_T0); if(PFB){const char*pb=(const char*)(b+PF*1024); for(int l=0;l<32;l++) _mm_prefetch(pb+64*l,_MM_HINT_T0);} }
      _tile_loadd(4,a,64);_tile_loadd(5,a+512,64);_tile_loadd(6,b,128);_tile_loadd(7,b+32,128);
      _tile_dpbf16ps(0,4,6);_tile_dpbf16ps(1,4,7);_tile_dpbf16ps(2,5,6);_tile_dpbf16ps(3,5,7);
      a+=1024;b+=1024;}
    _tile_stored(0,cb,128);_tile_stored(1,cb+16,128);_tile_stored(2,cb+512,128);_tile_stored(3,cb+528,128);}
   t=now()-t; if(t<best)best=t;}
  printf("cs=%d ap=%d bp=%d cload=%d: %.1f GFLOP/s (A %d KB, B %d KB)\n",cs,ap,bp,cl,blocks*cs*4*16384.0/best/1e9, ap*cs*2, bp*cs*2);
}
