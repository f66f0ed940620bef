// Host side of the explicit-flag vector add (AICORE_KERNEL names the kernel). For
// add_missing_flag, the run stops with the simulator's race report, which this program prints;
// it succeeds when the race is reported (AICORE_EXPECT_RACE) or when the results are right.
#include <cstdio>

#include "tessera/core/error.h"
#include "tessera/targets/aicore/api/report.h"
#include "tikicpulib.h"

extern "C" __global__ __aicore__ void AICORE_KERNEL(GM_ADDR x, GM_ADDR y, GM_ADDR z);

int32_t main()
{
    const size_t n = 8 * 2048;
    uint8_t* x = (uint8_t*)AscendC::GmAlloc(n * sizeof(uint16_t));
    uint8_t* y = (uint8_t*)AscendC::GmAlloc(n * sizeof(uint16_t));
    uint8_t* z = (uint8_t*)AscendC::GmAlloc(n * sizeof(uint16_t));
    for (size_t i = 0; i < n; ++i) {
        ((_Float16*)x)[i] = (_Float16)(0.5f * (float)(i % 31));
        ((_Float16*)y)[i] = (_Float16)(-0.25f * (float)(i % 7));
    }
    AscendC::SetKernelMode(KernelMode::AIV_MODE);
    int rc = 0;
    try {
        ICPU_RUN_KF(AICORE_KERNEL, 8, x, y, z);
        size_t wrong = 0;
        for (size_t i = 0; i < n; ++i)
            if ((float)((_Float16*)z)[i] != (float)(_Float16)((float)((_Float16*)x)[i] + (float)((_Float16*)y)[i])) ++wrong;
        std::printf("%s: %zu of %zu results differ from x + y\n", "" AICORE_KERNEL_NAME, wrong, n);
        tessera::aicore::print_report(stdout);
#ifdef AICORE_EXPECT_RACE
        std::printf("expected a race report, got none\n");
        rc = 1;
#else
        rc = wrong == 0 ? 0 : 1;
#endif
    } catch (const tessera::DeviceFault& fault) {
        std::printf("the simulator stopped the kernel:\n  %s\n", fault.what());
#ifndef AICORE_EXPECT_RACE
        rc = 1;
#endif
    }
    AscendC::GmFree((void*)x);
    AscendC::GmFree((void*)y);
    AscendC::GmFree((void*)z);
    return rc;
}
