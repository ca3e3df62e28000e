/* Host scalar conversions for the CPU backend: round to nearest even everywhere. */
#include "internal.h"

#include <math.h>
#include <string.h>

static uint32_t f32_bits(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
static float bits_f32(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }

size_t hk_dtype_size(hk_dtype dtype)
{
    switch (dtype) {
    case HK_DTYPE_F32: return 4;
    case HK_DTYPE_F16:
    case HK_DTYPE_BF16: return 2;
    case HK_DTYPE_FP8_E4M3:
    case HK_DTYPE_FP8_E4M3FNUZ: return 1;
    default: return 0;
    }
}

const char *hk_dtype_name(hk_dtype dtype)
{
    switch (dtype) {
    case HK_DTYPE_NONE: return "none";
    case HK_DTYPE_F32: return "f32";
    case HK_DTYPE_F16: return "f16";
    case HK_DTYPE_BF16: return "bf16";
    case HK_DTYPE_FP8_E4M3: return "fp8_e4m3";
    case HK_DTYPE_FP8_E4M3FNUZ: return "fp8_e4m3fnuz";
    }
    return "unknown";
}

float hk_bf16_to_f32(uint16_t v) { return bits_f32((uint32_t)v << 16); }

uint16_t hk_f32_to_bf16(float f)
{
    uint32_t u = f32_bits(f);
    if (isnan(f))
        return (uint16_t)((u >> 16) | 0x40); /* keep it a quiet NaN */
    u += 0x7FFF + ((u >> 16) & 1);
    return (uint16_t)(u >> 16);
}

float hk_f16_to_f32(uint16_t v)
{
    uint32_t sign = (uint32_t)(v & 0x8000) << 16, exp = (v >> 10) & 0x1F, man = v & 0x3FF;
    if (exp == 0x1F)
        return bits_f32(sign | 0x7F800000u | (man << 13));
    if (exp == 0)
        return (sign ? -1.0f : 1.0f) * ldexpf((float)man, -24);
    return bits_f32(sign | ((exp + 112) << 23) | (man << 13));
}

uint16_t hk_f32_to_f16(float f)
{
    uint32_t u = f32_bits(f);
    uint16_t sign = (uint16_t)((u >> 16) & 0x8000);
    float a = fabsf(f);
    if (isnan(f))
        return sign | 0x7E00;
    if (a >= 65520.0f) /* rounds to infinity */
        return sign | 0x7C00;
    if (a < 6.103515625e-05f) /* subnormal: quantise to 2^-24 steps, RNE */
        return sign | (uint16_t)nearbyintf(a * 16777216.0f);
    uint32_t au = f32_bits(a);
    au += 0xFFF + ((au >> 13) & 1);
    return sign | (uint16_t)(((au >> 23) - 112) << 10 | ((au >> 13) & 0x3FF));
}

/* fp8 e4m3 variants differ in bias (7 vs 8), NaN encoding and maximum (448 vs 240). */
static bool fp8_fnuz(hk_dtype dtype) { return dtype == HK_DTYPE_FP8_E4M3FNUZ; }

float hk_fp8_to_f32(hk_dtype dtype, uint8_t v)
{
    int fnuz = fp8_fnuz(dtype);
    int sign = v >> 7, e = (v >> 3) & 15, m = v & 7;
    if (fnuz ? v == 0x80 : (e == 15 && m == 7))
        return NAN;
    float mag = e == 0 ? ldexpf((float)m, fnuz ? -10 : -9) : ldexpf((float)(8 + m), e - (fnuz ? 11 : 10));
    return sign ? -mag : mag;
}

uint8_t hk_f32_to_fp8(hk_dtype dtype, float f)
{
    int fnuz = fp8_fnuz(dtype);
    if (isnan(f))
        return fnuz ? 0x80 : 0x7F;
    uint8_t sign = signbit(f) ? 0x80 : 0;
    float a = fabsf(f), max = fnuz ? 240.0f : 448.0f;
    if (a >= max)
        return sign | (fnuz ? 0x7F : 0x7E);
    int min_exp = fnuz ? -7 : -6; /* exponent of the smallest normal */
    int e;
    frexpf(a, &e);
    e -= 1; /* a = 1.x * 2^e */
    if (e < min_exp)
        e = min_exp;
    float q = nearbyintf(ldexpf(a, 3 - e)); /* 3 mantissa bits, RNE */
    if (q >= 16.0f) {
        q = 8.0f;
        e += 1;
    }
    if (q == 0.0f)
        return fnuz ? 0 : sign; /* fnuz has no negative zero */
    uint8_t code = q < 8.0f ? (uint8_t)q : (uint8_t)(((e - min_exp + 1) << 3) | ((int)q - 8));
    return sign | code;
}

float hk_load_scalar(hk_dtype dtype, const void *base, int64_t index)
{
    switch (dtype) {
    case HK_DTYPE_F32: return ((const float *)base)[index];
    case HK_DTYPE_F16: return hk_f16_to_f32(((const uint16_t *)base)[index]);
    case HK_DTYPE_BF16: return hk_bf16_to_f32(((const uint16_t *)base)[index]);
    case HK_DTYPE_FP8_E4M3:
    case HK_DTYPE_FP8_E4M3FNUZ: return hk_fp8_to_f32(dtype, ((const uint8_t *)base)[index]);
    default: return NAN;
    }
}

void hk_store_scalar(hk_dtype dtype, void *base, int64_t index, float value)
{
    switch (dtype) {
    case HK_DTYPE_F32: ((float *)base)[index] = value; break;
    case HK_DTYPE_F16: ((uint16_t *)base)[index] = hk_f32_to_f16(value); break;
    case HK_DTYPE_BF16: ((uint16_t *)base)[index] = hk_f32_to_bf16(value); break;
    case HK_DTYPE_FP8_E4M3:
    case HK_DTYPE_FP8_E4M3FNUZ: ((uint8_t *)base)[index] = hk_f32_to_fp8(dtype, value); break;
    default: break;
    }
}

uint32_t hk_dropout_threshold(float dropout_p)
{
    if (!(dropout_p > 0.0f))
        return 0;
    double t = floor((double)dropout_p * 4294967296.0);
    return t >= 4294967295.0 ? 0xFFFFFFFFu : (uint32_t)t;
}
