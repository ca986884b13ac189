/* global_pool2d.cl: nn.global_avg_pool2d over NCHW data, and a mean over the innermost
 * axes (each run of HW elements a plane), with a fused elementwise epilogue. Work-item
 * `plane` (n*C + c) sums its plane's HW contiguous elements in
 * vectors of PT (VLOAD_X), adds the vector's lanes, then the last HW % PT elements one
 * by one, and divides by HW. The general pool2d.cl, a window of H x W walked row by
 * row with a bounds check per element, took squeezenet1_1's 1000 x 13 x 13 pool 0.064 ms
 * against the host's 0.012 (PoCL, Intel Xeon, two threads).
 *
 * Defined by the generator: KNAME, KPARAMS (x, y, then epilogue operands), NC (planes),
 * HW (elements a plane), PT (4, 8 or 16), VEC (float##PT), VLOAD_X(p), EPILOGUE(v, fi),
 * LD_x, ST_Y. */
__kernel void KNAME(KPARAMS)
{
    const int plane = get_global_id(0);
    if (plane >= NC)
        return;
    const int base = plane * HW;
    VEC acc = (VEC)(0.0f);
    for (int i = 0; i < HW / PT; i++)
        acc += VLOAD_X(x + base + i * PT);
#if PT == 16
    const float8 a8 = acc.lo + acc.hi;
#elif PT == 8
    const float8 a8 = acc;
#endif
#if PT >= 8
    const float4 a4 = a8.lo + a8.hi;
#else
    const float4 a4 = acc;
#endif
    const float2 a2 = a4.lo + a4.hi;
    float sum = a2.x + a2.y;
    for (int i = HW / PT * PT; i < HW; i++)
        sum += LD_x(base + i);
    float v = sum / (float)HW;
    EPILOGUE(v, plane);
    ST_Y(plane, v);
}
