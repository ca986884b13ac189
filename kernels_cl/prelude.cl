/* prelude.cl: the start of every program byocl generates (OpenCL C 1.2).
 *
 * Tensors are C-order arrays in global memory. float32 tensors are `float *`; float16
 * tensors are `ushort *` read and written with vload_half/vstore_half_rte (storage only:
 * the device need not support cl_khr_fp16, and every computation is in float). The index
 * tensors of take are `int *` (int32) or `long *` (int64), read as they are, and so are
 * resize2d's offset table and argmax/argmin's int32 result. Each kernel instance that
 * follows defines, for each of its buffer parameters P:
 *   LD_P(i)        element i of P as a float (an integer buffer: as an int or long)
 * and for its result Y:
 *   ST_Y(i, v)     stores v as element i of Y (float16 rounds to nearest even)
 * then includes a template (conv2d, dense, pool2d, softmax, reduce, resize, elemwise,
 * gather, move, ...) specialized with #defines, and #undefs them all afterwards. */

#define BYOCL_LD_F32(p, i) ((p)[(i)])
#define BYOCL_LD_F16(p, i) vload_half((i), (const __global half *)(p))
#define BYOCL_LD_INT(p, i) ((p)[(i)])
#define BYOCL_ST_F32(p, i, v) ((p)[(i)] = (v))
#define BYOCL_ST_F16(p, i, v) vstore_half_rte((v), (i), (__global half *)(p))
#define BYOCL_ST_INT(p, i, v) ((p)[(i)] = (v))

/* v rounded to float16 and back: a fused epilogue step whose op yields float16 rounds
 * where the unfused op would have stored its result. */
inline float byocl_round_f16(float v)
{
    ushort h;
    vstore_half_rte(v, 0, (__private half *)&h);
    return vload_half(0, (const __private half *)&h);
}

/* maximum/minimum propagate NaN, as numpy's (and the reference kernels') do. */
inline float byocl_max(float a, float b)
{
    return isnan(a) || isnan(b) ? NAN : (a > b ? a : b);
}

inline float byocl_min(float a, float b)
{
    return isnan(a) || isnan(b) ? NAN : (a < b ? a : b);
}

inline float byocl_sigmoid(float x)
{
    return 1.0f / (1.0f + exp(-x));
}

/* floor_mod: the remainder of a / b with the sign of b (numpy's mod). */
inline float byocl_floor_mod(float a, float b)
{
    float r = fmod(a, b);
    return r != 0.0f && (r < 0.0f) != (b < 0.0f) ? r + b : r;
}
