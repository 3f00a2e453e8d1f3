// Session 25's AMX harness (not kiln code, not part of the test suite): a bf16 GEMM on one core
// in kiln's packed layout (32-row blocks of A and 32-column VNNI blocks of B, 1 KiB tiles),
// with the loop orders of docs/benchmarks.md's "Twenty-fifth session" section.
//   gcc -O2 -DMC=256 -mamx-tile -mamx-bf16 -mavx512f gemm_orders.c -o /tmp/gemm_orders
//   /tmp/gemm_orders N KC|GROUP MODE [BYTE_OFFSET]   (KM=6 in the environment: K = 6N)
// MODE 0: tile products alone; 1: operands held in L1; 2: kiln's order (groups of GROUP row blocks, whole K in the
// tiles); 3/4: K in chunks of KC, C accumulated through the output (j then i / i then j);
// 5: macro blocks of MC × MC with C in a packed buffer; 6: as 2 with C stored to one scratch
// block; 7: as 2 with one B block. BYTE_OFFSET misaligns the packed operands.
#include <immintrin.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>
typedef struct { uint8_t p, s; uint8_t r[14]; uint16_t cb[16]; uint8_t rows[16]; } __attribute__((aligned(64))) cfg_t;
static double now(){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+t.tv_nsec*1e-9;}
static void setup(){ syscall(SYS_arch_prctl,0x1023,18); cfg_t c; memset(&c,0,64); c.p=1; for(int t=0;t<8;t++){c.cb[t]=64;c.rows[t]=16;} _tile_loadconfig(&c);}
// one block over steps, accumulating (load C if acc)
static inline void blk(const uint16_t*a,const uint16_t*b,int steps,float*c,long ldc,int acc){
  if(acc){_tile_loadd(0,c,ldc);_tile_loadd(1,c+16,ldc);_tile_loadd(2,(char*)c+16*ldc,ldc);_tile_loadd(3,(char*)c+16*ldc+64,ldc);}
  else {_tile_zero(0);_tile_zero(1);_tile_zero(2);_tile_zero(3);}
  for(int s=0;s<steps;s++){
    _tile_loadd(4,a,64);_tile_loadd(5,a+512,64);_tile_loadd(6,b,128);_tile_loadd(7,b+32,128);
    _tile_dpbf16ps(0,4,6);_tile_dpbf16ps(1,4,7);_tile_dpbf16ps(2,5,6);_tile_dpbf16ps(3,5,7);
    a+=1024;b+=1024;}
  _tile_stored(0,c,ldc);_tile_stored(1,c+16,ldc);_tile_stored(2,(char*)c+16*ldc,ldc);_tile_stored(3,(char*)c+16*ldc+64,ldc);
}
int main(int argc,char**argv){
  setup();
  int n=argc>1?atoi(argv[1]):2048; int kc=argc>2?atoi(argv[2]):n; int mode=argc>3?atoi(argv[3]):0;
  int KM=getenv("KM")?atoi(getenv("KM")):1; int M=n,N=n,K=n*KM, steps=K/32;
  int off=argc>4?atoi(argv[4]):0; uint16_t*A=(uint16_t*)((char*)aligned_alloc(64,(size_t)M*K*2+64)+off),*B=(uint16_t*)((char*)aligned_alloc(64,(size_t)K*N*2+64)+off); float*C=aligned_alloc(64,(size_t)M*N*4);
  for(size_t i=0;i<(size_t)M*K;i++)A[i]=(rand()&0x807f)|0x3e00|(rand()&0x80); for(size_t i=0;i<(size_t)K*N;i++)B[i]=(rand()&0x807f)|0x3e00|(rand()&0x80);
  double best=1e9;
  for(int rep=0;rep<8;rep++){
    double t=now();
    if(mode==0){ // tdp only
      for(long it=0;it<(long)M/32*N/32*steps;it++){_tile_dpbf16ps(0,4,6);_tile_dpbf16ps(1,4,7);_tile_dpbf16ps(2,5,6);_tile_dpbf16ps(3,5,7);}
    } else if(mode==1){ // L1-resident operands
      for(long it=0;it<(long)M/32*N/32;it++) blk(A,B,1,C,N*4,0), blk(A,B,steps-1>0?0:0,C,N*4,1);
      for(long it=0;it<(long)M/32*N/32;it++){ for(int s=0;s<steps;s++){_tile_loadd(4,A,64);_tile_loadd(5,A+512,64);_tile_loadd(6,B,128);_tile_loadd(7,B+32,128);
    _tile_dpbf16ps(0,4,6);_tile_dpbf16ps(1,4,7);_tile_dpbf16ps(2,5,6);_tile_dpbf16ps(3,5,7);} }
    } else if(mode==2){ // kiln's current: group of 16 row blocks, full K
      int group=kc;
      for(int g0=0;g0<M/32;g0+=group) for(int j=0;j<N/32;j++) for(int i=g0;i<g0+group&&i<M/32;i++)
        blk(A+(size_t)i*steps*1024,B+(size_t)j*steps*1024,steps,C+(size_t)i*32*N+j*32,N*4,0);
    } else if(mode==6){ // mode 2 but C stored to a contiguous scratch block
      int group=kc; static float cs2[1024] __attribute__((aligned(64)));
      for(int g0=0;g0<M/32;g0+=group) for(int j=0;j<N/32;j++) for(int i=g0;i<g0+group&&i<M/32;i++)
        blk(A+(size_t)i*steps*1024,B+(size_t)j*steps*1024,steps,cs2,128,0);
    } else if(mode==7){ // mode 2, same B block always (B in L2 for sure)
      int group=kc;
      for(int g0=0;g0<M/32;g0+=group) for(int j=0;j<N/32;j++) for(int i=g0;i<g0+group&&i<M/32;i++)
        blk(A+(size_t)i*steps*1024,B,steps,C+(size_t)i*32*N+j*32,N*4,0);
    } else if(mode==3){ // K chunks: for chunk, for j, for i
      int cs=kc/32;
      for(int k0=0;k0<steps;k0+=cs) for(int j=0;j<N/32;j++) for(int i=0;i<M/32;i++)
        blk(A+(size_t)i*steps*1024+k0*1024,B+(size_t)j*steps*1024+k0*1024,cs,C+(size_t)i*32*N+j*32,N*4,k0>0);
    } else if(mode==4){ // K chunks: for chunk, for i, for j (A panel in L1, B streamed)
      int cs=kc/32;
      for(int k0=0;k0<steps;k0+=cs) for(int i=0;i<M/32;i++) for(int j=0;j<N/32;j++)
        blk(A+(size_t)i*steps*1024+k0*1024,B+(size_t)j*steps*1024+k0*1024,cs,C+(size_t)i*32*N+j*32,N*4,k0>0);
    } else if(mode==5){ // macro blocks Mc=Nc=mc, Kc=kc, C in a packed buffer
      int mc=MC, cs=kc/32; static float cb[512*512] __attribute__((aligned(64)));
      for(int jc=0;jc<N/32;jc+=mc/32) for(int ic=0;ic<M/32;ic+=mc/32)
       for(int k0=0;k0<steps;k0+=cs){ int last=k0+cs>=steps;
        for(int j=jc;j<jc+mc/32;j++) for(int i=ic;i<ic+mc/32;i++){
          float*cbuf=cb+((size_t)(j-jc)*(mc/32)+(i-ic))*1024;
          const uint16_t*a=A+(size_t)i*steps*1024+k0*1024,*b=B+(size_t)j*steps*1024+k0*1024;
          if(k0){_tile_loadd(0,cbuf,128);_tile_loadd(1,cbuf+16,128);_tile_loadd(2,cbuf+512,128);_tile_loadd(3,cbuf+528,128);}
          else {_tile_zero(0);_tile_zero(1);_tile_zero(2);_tile_zero(3);}
          for(int s=0;s<cs;s++){
            _tile_loadd(4,a,64);_tile_loadd(5,a+512,64);_tile_loadd(6,b,128);_tile_loadd(7,b+32,128);
            _tile_dpbf16ps(0,4,6);_tile_dpbf16ps(1,4,7);_tile_dpbf16ps(2,5,6);_tile_dpbf16ps(3,5,7);
            a+=1024;b+=1024;}
          if(last){ float*c=C+(size_t)i*32*N+j*32; long ldc=N*4;
            _tile_stored(0,c,ldc);_tile_stored(1,c+16,ldc);_tile_stored(2,(char*)c+16*ldc,ldc);_tile_stored(3,(char*)c+16*ldc+64,ldc);}
          else {_tile_stored(0,cbuf,128);_tile_stored(1,cbuf+16,128);_tile_stored(2,cbuf+512,128);_tile_stored(3,cbuf+528,128);}
        }}
    }
    t=now()-t; if(t<best)best=t;
  }
  double fl=mode==1?2.0*M*N*K:2.0*M*N*K;
  printf("n=%d kc=%d mode=%d: %.3f ms %.1f GFLOP/s\n",n,kc,mode,best*1e3,fl/best/1e9);
  _tile_release();
}
