#pragma once
// k_fast_kernel: a function compiled for AVX-512, AVX2 and the baseline and picked at load time
// (the build has no -march flag). The library is built with -ffp-contract=off (no a*b+c turned
// into an FMA), so every clone computes the same bits; only loops without a reduction, or with
// lanes written out, vectorise.
#if defined(__x86_64__) && defined(__GNUC__)
#define k_fast_kernel __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define k_fast_kernel
#endif
