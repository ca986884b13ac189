/* prelude.cl: the start of every program byocl generates (OpenCL C 1.2).
 *
 * Tensors are C-order arrays in global memory. float32 tensors are `float *`; float16
 * tensors are `ushort *` read and written with vload_half/vstore_half_rte (storage only:
 * the device need not support cl_khr_fp16, and every computation is in float). The index
 * tensors of take are `int *` (int32) or `long *` (int64), read as they are, and so are
 * resize2d's offset table and argmax/argmin's int32 result. bool tensors (comparisons,
 * logical ops, where's condition) are `uchar *` of 0 or 1, computed on as 0.0f and 1.0f. Each kernel instance that
 * follows defines, for each of its buffer parameters P:
 *   LD_P(i)        element i of P as a float (an integer buffer: as an int or long)
 * and for its result Y:
 *   ST_Y(i, v)     stores v as element i of Y (float16 rounds to nearest even)
 * then includes a template (conv2d, dense, pool2d, softmax, layer_norm, reduce, resize,
 * elemwise, gather, move, ...) specialized with #defines, and #undefs them all afterwards. */

#define BYOCL_LD_F32(p, i) ((p)[(i)])
#define BYOCL_LD_F16(p, i) vload_half((i), (const __global half *)(p))
#define BYOCL_LD_INT(p, i) ((p)[(i)])
#define BYOCL_ST_F32(p, i, v) ((p)[(i)] = (v))
#define BYOCL_ST_F16(p, i, v) vstore_half_rte((v), (i), (__global half *)(p))
#define BYOCL_ST_INT(p, i, v) ((p)[(i)] = (v))
#define BYOCL_LD_BOOL(p, i) ((float)(p)[(i)])
#define BYOCL_ST_BOOL(p, i, v) ((p)[(i)] = (v) != 0.0f)

/* vstore##w(v, 0, p) of a float vector v of width w (2, 4, 8 or 16) to global float memory
 * p, as one store: PoCL 3.1 compiles vstore16 into four 4-float stores (vmovups xmm and
 * vextractf32x4 on AVX-512), which took a 16 -> 96 1x1 conv on 112x112 maps 7% of its
 * time (whole models: within 1%). Through a vector type aligned as a float, clang emits
 * one unaligned store. */
#if defined(__clang__)
typedef float byocl_float16_u __attribute__((ext_vector_type(16), aligned(4)));
typedef float byocl_float8_u __attribute__((ext_vector_type(8), aligned(4)));
typedef float byocl_float4_u __attribute__((ext_vector_type(4), aligned(4)));
typedef float byocl_float2_u __attribute__((ext_vector_type(2), aligned(4)));
#define BYOCL_VSTORE_F32_(w, v, p) (*(__global byocl_float##w##_u *)(p) = (v))
#else
#define BYOCL_VSTORE_F32_(w, v, p) vstore##w((v), 0, (p))
#endif
#define BYOCL_VSTORE_F32(w, v, p) BYOCL_VSTORE_F32_(w, v, p) /* w expanded first (PT) */

/* The lanes of a float vector of width w (4, 8 or 16) at elements o, o + s, o + 2s, ...:
 * BYOCL_GATHER##w reads them with LD (an LD_P macro), BYOCL_SCATTER##w stores the lanes of
 * the vector variable v with ST (ST_Y). An epilogue over a vector of output channels
 * (EPILOGUE_VC) reads a residual so and stores its result so. */
#define BYOCL_GATHER4(LD, o, s) ((float4)(LD(o), LD((o) + (s)), LD((o) + 2 * (s)), LD((o) + 3 * (s))))
#define BYOCL_GATHER8(LD, o, s) ((float8)(BYOCL_GATHER4(LD, o, s), BYOCL_GATHER4(LD, (o) + 4 * (s), s)))
#define BYOCL_GATHER16(LD, o, s)                                                            \
    ((float16)(BYOCL_GATHER8(LD, o, s), BYOCL_GATHER8(LD, (o) + 8 * (s), s)))
#define BYOCL_SCATTER4(ST, o, s, v)                                                         \
    do {                                                                                   \
        ST((o), (v).s0);                                                                   \
        ST((o) + (s), (v).s1);                                                             \
        ST((o) + 2 * (s), (v).s2);                                                         \
        ST((o) + 3 * (s), (v).s3);                                                         \
    } while (0)
#define BYOCL_SCATTER8(ST, o, s, v)                                                         \
    do {                                                                                   \
        BYOCL_SCATTER4(ST, o, s, (v).lo);                                                  \
        BYOCL_SCATTER4(ST, (o) + 4 * (s), s, (v).hi);                                      \
    } while (0)
#define BYOCL_SCATTER16(ST, o, s, v)                                                        \
    do {                                                                                   \
        BYOCL_SCATTER8(ST, o, s, (v).lo);                                                  \
        BYOCL_SCATTER8(ST, (o) + 8 * (s), s, (v).hi);                                      \
    } while (0)

/* A hint to load the cache line holding *p (conv2d kernels on CPU devices,
 * byocl_cl_codegen_options.cpu): clang's builtin, since OpenCL's prefetch() does nothing
 * in PoCL 3.1; other compilers get that one. */
#if defined(__clang__)
#define BYOCL_PREFETCH(p) __builtin_prefetch(p)
#else
#define BYOCL_PREFETCH(p) prefetch((p), 1)
#endif

/* The start of vector v of plane nc in a plane kernel (conv2d_depthwise_plane.cl's loop,
 * pool2d_plane.cl; they define PT, NC, H, W, OH, OW, MIN_OFF and MAX_OFF): p0, its first
 * output (the last vector ends at the plane's end, overlapping the one before it), and
 * rows_in, whether every tap of every lane lies inside the plane's rows; else, where its
 * loads would leave the tensor (the first plane's start, the last one's end), it runs
 * ONE_OUTPUT(p) for each of its outputs and goes on to the next vector. */
#define BYOCL_PLANE_VECTOR_BEGIN(v, nc, p0, rows_in, ONE_OUTPUT)                            \
    const int p0 = min((v) * PT, OH * OW - PT);                                            \
    const bool rows_in = p0 + MIN_OFF >= 0 && p0 + MAX_OFF + PT <= H * W;                  \
    if (!rows_in && (((nc) == 0 && p0 + MIN_OFF < 0) ||                                    \
                     ((nc) == NC - 1 && p0 + MAX_OFF + PT > H * W))) {                     \
        _Pragma("unroll 1")                                                                \
        for (int j = 0; j < PT; j++)                                                       \
            ONE_OUTPUT(p0 + j)                                                             \
        continue;                                                                          \
    }

/* The stores of a row tile's RY x PT results acc[] (conv2d_depthwise.cl, pool2d_rows.cl:
 * rows oy0 onwards, columns ox0 onwards of plane `plane`), rows past OH dropped; the
 * kernel defines RY, PT, OH, OW, VEC, VSTORE, EPILOGUE and ST_Y, and EPILOGUE_V and
 * VSTORE_Y where the epilogue has a vector form.
 * BYOCL_ROW_TILE_STORE_VECTORS: a tile inside the row, each row one vector through the
 * vector epilogue (only where it is defined). */
#define BYOCL_ROW_TILE_STORE_VECTORS(acc, plane, oy0, ox0)                                 \
    _Pragma("unroll")                                                                      \
    for (int r_ = 0; r_ < RY; r_++) {                                                      \
        if ((oy0) + r_ < OH) {                                                             \
            const int fi0_ = ((plane) * OH + (oy0) + r_) * OW + (ox0);                     \
            VEC v_ = (acc)[r_];                                                            \
            EPILOGUE_V(v_, fi0_);                                                          \
            VSTORE_Y(fi0_, v_);                                                            \
        }                                                                                  \
    }
/* BYOCL_ROW_TILE_STORE_LANES: any tile, lane by lane through the scalar epilogue, lanes
 * past OW dropped. The rows are a rolled loop (conv2d.cl says why) over a copy of the
 * accumulators, which keeps acc itself in registers. */
#define BYOCL_ROW_TILE_STORE_LANES(acc, plane, oy0, ox0)                                   \
    {                                                                                      \
        VEC spilled_[RY];                                                                  \
        _Pragma("unroll")                                                                  \
        for (int r_ = 0; r_ < RY; r_++)                                                    \
            spilled_[r_] = (acc)[r_];                                                      \
        for (int r_ = 0; r_ < RY && (oy0) + r_ < OH; r_++) {                               \
            float res_[PT];                                                                \
            VSTORE(spilled_[r_], 0, res_);                                                 \
            const int fi0_ = ((plane) * OH + (oy0) + r_) * OW + (ox0);                     \
            for (int j_ = 0; j_ < PT; j_++) {                                              \
                if ((ox0) + j_ < OW) {                                                     \
                    float v_ = res_[j_];                                                   \
                    EPILOGUE(v_, fi0_ + j_);                                               \
                    ST_Y(fi0_ + j_, v_);                                                   \
                }                                                                          \
            }                                                                              \
        }                                                                                  \
    }

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

/* The vector forms of byocl_max, byocl_min and byocl_sigmoid for a vector epilogue
 * (EPILOGUE_V, whose kernel defines VEC). */
#define BYOCL_MAX_V(a, b) ((isnan(a) | isnan(b)) ? (VEC)(NAN) : ((a) > (b) ? (a) : (b)))
#define BYOCL_MIN_V(a, b) ((isnan(a) | isnan(b)) ? (VEC)(NAN) : ((a) < (b) ? (a) : (b)))
#define BYOCL_SIGMOID_V(x) (1.0f / (1.0f + exp(-(x))))

/* erf as a rational function of x (Eigen's generic_fast_erf_float): within 7.1 ulp of the
 * exact erf over all floats (4.3e-7 relative; checked against double erf on 2.2 million
 * points), without branches, so that PoCL vectorizes it across work-items: PoCL 3.1's
 * erf took about 11 ns per element (GELU in convnext_tiny: 13 ms a launch). The argument
 * is clamped to [-4, 4], where erf rounds to +-1; NaN passes through. */
inline float byocl_erf(float x)
{
    const float c = clamp(x, -4.0f, 4.0f), c2 = c * c;
    float p = -2.72614225801306e-10f;
    p = p * c2 + 2.77068142495902e-08f;
    p = p * c2 - 2.10102402082508e-06f;
    p = p * c2 - 5.69250639462346e-05f;
    p = p * c2 - 7.34990630326855e-04f;
    p = p * c2 - 2.95459980854025e-03f;
    p = p * c2 - 1.60960333262415e-02f;
    float q = -1.45660718464996e-05f;
    q = q * c2 - 2.13374055278905e-04f;
    q = q * c2 - 1.68282697438203e-03f;
    q = q * c2 - 7.37332916720468e-03f;
    q = q * c2 - 1.42647390514189e-02f;
    const float y = clamp(c * p / q, -1.0f, 1.0f);
    return isnan(x) ? x : y;
}

/* floor_mod: the remainder of a / b with the sign of b (numpy's mod). */
inline float byocl_floor_mod(float a, float b)
{
    float r = fmod(a, b);
    return r != 0.0f && (r < 0.0f) != (b < 0.0f) ? r + b : r;
}
