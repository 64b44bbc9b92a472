/*
** kubectl-rollout-lua: Go's math functions that gopher-lua's `^', math.pow,
** math.exp, math.log, math.log10, math.sinh, math.cosh, math.tanh,
** math.frexp, math.ldexp and math.modf call, computed as Go 1.19's math
** package computes them on amd64, bit for bit: Pow, Frexp, Ldexp, Modf,
** Sinh, Cosh and Tanh are its Go code (which Go's compiler does not fuse into
** multiply-adds on amd64), Exp and Log its amd64 assembly (exp_amd64.s takes
** its fused multiply-add path, that of every x86-64 CPU with AVX and FMA,
** which Go checks at run time). This file is not part of Lua 5.1; see
** README.md. No multiply-add may be fused here either (only `fma' fuses).
*/

#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#elif defined(__GNUC__)
#pragma GCC optimize ("fp-contract=off")
#endif

#include <math.h>
#include <stdint.h>
#include <string.h>


#define SIGN		0x8000000000000000ULL
#define POS_INF		0x7FF0000000000000ULL
#define NEG_INF		0xFFF0000000000000ULL
#define FRAC_MASK	0x000FFFFFFFFFFFFFULL
#define SHIFT		52
#define MASK		0x7FF
#define BIAS		1023

static uint64_t bits (double x) {
  uint64_t b;
  memcpy(&b, &x, sizeof b);
  return b;
}

static double frombits (uint64_t b) {
  double x;
  memcpy(&x, &b, sizeof x);
  return x;
}

/* Go's normalize: a subnormal scaled up to a normal number, and by what */
static double normalize (double x, int64_t *exp) {
  if (fabs(x) < 2.2250738585072014e-308) {
    *exp = -52;
    return x * 4503599627370496.0;  /* 2^52 */
  }
  *exp = 0;
  return x;
}


double lua_go_frexp (double f, int64_t *exp) {
  uint64_t x;
  *exp = 0;
  if (f == 0 || isinf(f) || isnan(f)) return f;
  f = normalize(f, exp);
  x = bits(f);
  *exp += (int64_t)((x >> SHIFT) & MASK) - BIAS + 1;
  x &= ~((uint64_t)MASK << SHIFT);
  x |= (uint64_t)(BIAS - 1) << SHIFT;
  return frombits(x);
}


double lua_go_ldexp (double frac, int64_t exp) {
  int64_t e;
  uint64_t x;
  double m = 1;
  if (frac == 0 || isinf(frac) || isnan(frac)) return frac;
  frac = normalize(frac, &e);
  /* Go's int64 sums wrap (in C an overflow is undefined): added as unsigned */
  exp = (int64_t)((uint64_t)exp + (uint64_t)e);
  x = bits(frac);
  exp = (int64_t)((uint64_t)exp + (uint64_t)((int64_t)((x >> SHIFT) & MASK) - BIAS));
  if (exp < -1075) return copysign(0, frac);  /* underflow */
  if (exp > 1023) return frac < 0 ? -HUGE_VAL : HUGE_VAL;  /* overflow */
  if (exp < -1022) {  /* denormal */
    exp += 53;
    m = 1.0 / 9007199254740992.0;  /* 2^-53 */
  }
  x &= ~((uint64_t)MASK << SHIFT);
  x |= (uint64_t)(exp + BIAS) << SHIFT;
  return m * frombits(x);
}


/* Go's Modf: the fraction, and the integer part in `*ip' */
double lua_go_modf (double f, double *ip) {
  uint64_t x;
  unsigned e;
  if (f < 1) {
    if (f < 0) {
      double frac = lua_go_modf(-f, ip);
      *ip = -*ip;
      return -frac;
    }
    if (f == 0) {  /* -0, -0 for -0 */
      *ip = f;
      return f;
    }
    *ip = 0;
    return f;
  }
  x = bits(f);
  e = (unsigned)((x >> SHIFT) & MASK) - BIAS;
  if (e < 64 - 12) x &= ~(((uint64_t)1 << (64 - 12 - e)) - 1);
  *ip = frombits(x);
  return f - *ip;
}


/* exp_amd64.s, its AVX and FMA path */
double lua_go_exp (double x) {
  static const double LN2U = 0.69314718055966295651160180568695068359375;
  static const double LN2L = 0.28235290563031577122588448175013436025525412068e-12;
  static const double LOG2E = 1.4426950408889634073599246810018920;
  uint64_t b = bits(x);
  double t, r, p;
  int32_t k;
  uint32_t e;
  if ((b & ~SIGN) >= POS_INF) return b == NEG_INF ? 0 : x;  /* NaN or +Inf: x */
  if (x > 7.09782712893384e+02) return HUGE_VAL;
  t = nearbyint(LOG2E * x);  /* CVTSD2SL: to nearest, and out of range... */
  k = (t >= -2147483648.0 && t <= 2147483647.0) ? (int32_t)t : INT32_MIN;  /* ...this */
  r = fma(-(double)k, LN2U, x);
  r = fma(-(double)k, LN2L, r);
  r *= 0.0625;
  p = fma(2.4801587301587301587e-5, r, 1.9841269841269841270e-4);
  p = fma(p, r, 1.3888888888888888889e-3);
  p = fma(p, r, 8.3333333333333333333e-3);
  p = fma(p, r, 4.1666666666666666667e-2);
  p = fma(p, r, 1.6666666666666666667e-1);
  p = fma(p, r, 0.5);
  p = fma(p, r, 1.0);
  r *= p;
  p = r + 2.0;
  r *= p;
  p = r + 2.0;
  r *= p;
  p = r + 2.0;
  r *= p;
  p = r + 2.0;
  r = fma(r, p, 1.0);
  e = (uint32_t)k + 0x3FF;  /* the biased exponent, in 32 bits */
  if ((int32_t)e <= 0) {  /* denormal */
    if ((int32_t)e < -52) return 0;
    r *= frombits((uint64_t)(uint32_t)(e + 0x3FE) << SHIFT);
    e = 1;
  }
  else if ((int32_t)e >= 0x7FF) return HUGE_VAL;
  return r * frombits((uint64_t)e << SHIFT);
}


/* log_amd64.s (which reads a subnormal's exponent bits as they are) */
double lua_go_log (double x) {
  static const double HSqrt2 = 7.07106781186547524401e-01;
  static const double Ln2Hi = 6.93147180369123816490e-01;
  static const double Ln2Lo = 1.90821492927058770002e-10;
  static const double L1 = 6.666666666666735130e-01, L2 = 3.999999999940941908e-01;
  static const double L3 = 2.857142874366239149e-01, L4 = 2.222219843214978396e-01;
  static const double L5 = 1.818357216161805012e-01, L6 = 1.531383769920937332e-01;
  static const double L7 = 1.479819860511658591e-01;
  uint64_t b = bits(x);
  double f1, k, f, s, s2, s4, t1, t2, R, hfsq;
  if ((b & ~SIGN) == 0) return -HUGE_VAL;
  if ((int64_t)b < 0) return frombits(0x7FF8000000000001ULL);  /* NaN */
  if ((int64_t)b >= (int64_t)POS_INF) return x;  /* +Inf or NaN */
  f1 = frombits((b & FRAC_MASK) | 0x3FE0000000000000ULL);
  k = (double)(int32_t)(((b >> SHIFT) & MASK) - 0x3FE);
  if (!(HSqrt2 < f1)) {  /* CMPSD's "not less than" of HSqrt2 and f1 */
    k -= 1;
    f1 *= 2;
  }
  f = f1 - 1;
  s = f / (2 + f);
  s2 = s * s;
  s4 = s2 * s2;
  t1 = s2 * (L1 + s4 * (L3 + s4 * (L5 + s4 * L7)));
  t2 = s4 * (L2 + s4 * (L4 + s4 * L6));
  R = t1 + t2;
  hfsq = 0.5 * f * f;
  return k * Ln2Hi - ((hfsq - (s * (hfsq + R) + k * Ln2Lo)) - f);
}


double lua_go_log10 (double x) {
  return lua_go_log(x) * 0x1.bcb7b1526e50ep-2;  /* Go's constant 1/Ln10 */
}


static int isoddint (double x) {
  double xi;
  double xf = lua_go_modf(x, &xi);
  /* Go's int64 of a double beyond it is -2^63, an even number */
  return xf == 0 && fabs(xi) < 9223372036854775808.0 && ((int64_t)xi & 1) == 1;
}

/* x**y where |y| is infinite or too large to be exact */
static double pow_limit (double x, double y) {
  if (x == -1) return 1;
  if ((fabs(x) < 1) == (y > 0)) return 0;
  return HUGE_VAL;
}

double lua_go_pow (double x, double y) {
  double yi, yf, a1 = 1, x1;
  int64_t ae = 0, xe, i;
  if (y == 0 || x == 1) return 1;
  if (y == 1) return x;
  if (isnan(x) || isnan(y)) return NAN;
  if (x == 0) {
    if (y < 0) return isoddint(y) ? copysign(HUGE_VAL, x) : HUGE_VAL;
    if (y > 0) return isoddint(y) ? x : 0;
  }
  else if (isinf(y)) return pow_limit(x, y);
  else if (isinf(x)) {
    if (x < 0) return lua_go_pow(1 / x, -y);  /* Pow(-0, -y) */
    if (y < 0) return 0;
    if (y > 0) return HUGE_VAL;
  }
  else if (y == 0.5) return sqrt(x);
  else if (y == -0.5) return 1 / sqrt(x);
  yf = lua_go_modf(fabs(y), &yi);
  if (yf != 0 && x < 0) return NAN;
  if (yi >= 9223372036854775808.0) return pow_limit(x, y);  /* 1 << 63 */
  if (yf != 0) {  /* ans *= x**yf */
    if (yf > 0.5) {
      yf--;
      yi++;
    }
    a1 = lua_go_exp(yf * lua_go_log(x));
  }
  /* ans *= x**yi, by successive squarings of x, powers of two in ae */
  x1 = lua_go_frexp(x, &xe);
  for (i = (int64_t)yi; i != 0; i >>= 1) {
    if (xe < -(1 << 12) || (1 << 12) < xe) {
      ae += xe;  /* the final Ldexp over- or underflows */
      break;
    }
    if ((i & 1) == 1) {
      a1 *= x1;
      ae += xe;
    }
    x1 *= x1;
    xe = (int64_t)((uint64_t)xe << 1);  /* Go's shift of a negative int64 */
    if (x1 < .5) {
      x1 += x1;
      xe--;
    }
  }
  if (y < 0) {
    a1 = 1 / a1;
    ae = -ae;
  }
  return lua_go_ldexp(a1, ae);
}


double lua_go_sinh (double x) {
  static const double P0 = -0.6307673640497716991184787251e+6;
  static const double P1 = -0.8991272022039509355398013511e+5;
  static const double P2 = -0.2894211355989563807284660366e+4;
  static const double P3 = -0.2630563213397497062819489e+2;
  static const double Q0 = -0.6307673640497716991212077277e+6;
  static const double Q1 = 0.1521517378790019070696485176e+5;
  static const double Q2 = -0.173678953558233699533450911e+3;
  int sign = 0;
  double temp;
  if (x < 0) {
    x = -x;
    sign = 1;
  }
  if (x > 21) temp = lua_go_exp(x) * 0.5;
  else if (x > 0.5) {
    double ex = lua_go_exp(x);
    temp = (ex - 1 / ex) * 0.5;
  }
  else {
    double sq = x * x;
    temp = (((P3 * sq + P2) * sq + P1) * sq + P0) * x;
    temp = temp / (((sq + Q2) * sq + Q1) * sq + Q0);
  }
  return sign ? -temp : temp;
}


double lua_go_cosh (double x) {
  double ex;
  x = fabs(x);
  if (x > 21) return lua_go_exp(x) * 0.5;
  ex = lua_go_exp(x);
  return (ex + 1 / ex) * 0.5;
}


double lua_go_tanh (double x) {
  static const double P[] = {-9.64399179425052238628e-1, -9.92877231001918586564e1,
                             -1.61468768441708447952e3};
  static const double Q[] = {1.12811678491632931402e2, 2.23548839060100448583e3,
                             4.84406305325125486048e3};
  static const double MAXLOG = 8.8029691931113054295988e+01;  /* log(2**127) */
  double z = fabs(x), s;
  if (z > 0.5 * MAXLOG) return x < 0 ? -1 : 1;
  if (z >= 0.625) {
    s = lua_go_exp(2 * z);
    z = 1 - 2 / (s + 1);
    return x < 0 ? -z : z;
  }
  if (x == 0) return x;
  s = x * x;
  return x + x * s * ((P[0] * s + P[1]) * s + P[2]) / (((s + Q[0]) * s + Q[1]) * s + Q[2]);
}


/* Go's trigonometry: sin.go, tan.go, trig_reduce.go, atan.go, asin.go,
   atan2.go (Pi/2, Pi/4, 3*Pi/4 and 4/Pi as Go's constants round them) */
#define PI	3.141592653589793
#define PI_2	1.5707963267948966
#define PI_4	0.7853981633974483
#define PI4A	7.85398125648498535156e-1  /* Pi/4 in three parts */
#define PI4B	3.77489470793079817668e-8
#define PI4C	2.69515142907905952645e-15
#define REDUCE_THRESHOLD	536870912.0  /* 1 << 29 */

static const double sin_[] = {
  1.58962301576546568060e-10, -2.50507477628578072866e-8, 2.75573136213857245213e-6,
  -1.98412698295895385996e-4, 8.33333333332211858878e-3, -1.66666666666666307295e-1};
static const double cos_[] = {
  -1.13585365213876817300e-11, 2.08757008419747316778e-9, -2.75573141792967388112e-7,
  2.48015872888517045348e-5, -1.38888888888730564116e-3, 4.16666666666665929218e-2};

/* Go's trigReduce (Payne-Hanek), for x >= REDUCE_THRESHOLD: the octant in
   `*j', the remainder returned */
static double trigreduce (double x, uint64_t *j) {
  static const uint64_t mPi4[] = {
    0x0000000000000001ULL, 0x45f306dc9c882a53ULL, 0xf84eafa3ea69bb81ULL, 0xb6c52b3278872083ULL,
    0xfca2c757bd778ac3ULL, 0x6e48dc74849ba5c0ULL, 0x0c925dd413a32439ULL, 0xfc3bd63962534e7dULL,
    0xd1046bea5d768909ULL, 0xd338e04d68befc82ULL, 0x7323ac7306a673e9ULL, 0x3908bf177bf25076ULL,
    0x3ff12fffbc0b301fULL, 0xde5e2316b414da3eULL, 0xda6cfd9e4f96136eULL, 0x9e8c7ecd3cbfd45aULL,
    0xea4f758fd7cbe2f6ULL, 0x7a0e73ef14a525d4ULL, 0xd7f6bf623f1aba10ULL, 0xac06608df8f6d757ULL};
  uint64_t ix = bits(x), z0, z1, z2, hi, lo, e;
  unsigned __int128 m2, m1;
  int exp = (int)((ix >> SHIFT) & MASK) - BIAS - SHIFT;
  unsigned digit, bitshift, lz;
  ix &= ~((uint64_t)MASK << SHIFT);
  ix |= (uint64_t)1 << SHIFT;
  digit = (unsigned)(exp + 61) / 64;
  bitshift = (unsigned)(exp + 61) % 64;
  /* Go's shifts by 64 give 0, C's are undefined */
#define SHL(a, n) ((n) >= 64 ? 0 : (a) << (n))
#define SHR(a, n) ((n) >= 64 ? 0 : (a) >> (n))
  z0 = SHL(mPi4[digit], bitshift) | SHR(mPi4[digit + 1], 64 - bitshift);
  z1 = SHL(mPi4[digit + 1], bitshift) | SHR(mPi4[digit + 2], 64 - bitshift);
  z2 = SHL(mPi4[digit + 2], bitshift) | SHR(mPi4[digit + 3], 64 - bitshift);
  m2 = (unsigned __int128)z2 * ix;
  m1 = (unsigned __int128)z1 * ix;
  lo = (uint64_t)m1 + (uint64_t)(m2 >> 64);
  hi = z0 * ix + (uint64_t)(m1 >> 64) + (lo < (uint64_t)m1);
  *j = hi >> 61;
  hi = hi << 3 | lo >> 61;
  lz = hi == 0 ? 64 : (unsigned)__builtin_clzll(hi);
  e = (uint64_t)(BIAS - (lz + 1));
  hi = SHL(hi, lz + 1) | SHR(lo, 64 - (lz + 1));
  hi >>= 64 - SHIFT;
  hi |= e << SHIFT;
  x = frombits(hi);
#undef SHL
#undef SHR
  if ((*j & 1) == 1) {
    *j = (*j + 1) & 7;
    x--;
  }
  return x * PI_4;
}

/* the octant of x >= 0 and the remainder in it */
static double octant (double x, uint64_t *j) {
  double y;
  if (x >= REDUCE_THRESHOLD) return trigreduce(x, j);
  *j = (uint64_t)(x * 1.2732395447351628);  /* 4/Pi */
  y = (double)*j;
  if ((*j & 1) == 1) {
    (*j)++;
    y++;
  }
  *j &= 7;
  return ((x - y * PI4A) - y * PI4B) - y * PI4C;
}

static double sinpoly (double z, double zz) {
  return z + z * zz * ((((((sin_[0] * zz) + sin_[1]) * zz + sin_[2]) * zz + sin_[3]) * zz + sin_[4]) * zz + sin_[5]);
}

static double cospoly (double zz) {
  return 1.0 - 0.5 * zz + zz * zz * ((((((cos_[0] * zz) + cos_[1]) * zz + cos_[2]) * zz + cos_[3]) * zz + cos_[4]) * zz + cos_[5]);
}

/* Go's Sin and Tan, odd functions: 0 and NaN as they are, an infinity NaN,
   otherwise f(|x|) with the sign of x (a negation is exact: the results are
   Go's bit for bit) */
static double odd (double x, double (*f) (double)) {
  if (x == 0 || isnan(x)) return x;
  if (isinf(x)) return NAN;
  return x < 0 ? -f(-x) : f(x);
}

static double sin_positive (double x) {
  uint64_t j;
  double z = octant(x, &j), zz = z * z, y;
  y = ((j & 3) == 1 || (j & 3) == 2) ? cospoly(zz) : sinpoly(z, zz);
  return j > 3 ? -y : y;
}

double lua_go_sin (double x) {
  return odd(x, sin_positive);
}

double lua_go_cos (double x) {
  int sign = 0;
  uint64_t j;
  double z, zz, y;
  if (isnan(x) || isinf(x)) return NAN;
  z = octant(fabs(x), &j);
  if (j > 3) {
    j -= 4;
    sign = !sign;
  }
  if (j > 1) sign = !sign;
  zz = z * z;
  y = (j == 1 || j == 2) ? sinpoly(z, zz) : cospoly(zz);
  return sign ? -y : y;
}

static double tan_positive (double x) {
  static const double P[] = {-1.30936939181383777646e4, 1.15351664838587416140e6,
                             -1.79565251976484877988e7};
  static const double Q[] = {1.00000000000000000000e0, 1.36812963470692954678e4,
                             -1.32089234440210967447e6, 2.50083801823357915839e7,
                             -5.38695755929454629881e7};
  uint64_t j;
  double z, zz, y;
  z = octant(x, &j);
  zz = z * z;
  if (zz > 1e-14)
    y = z + z * (zz * (((P[0] * zz) + P[1]) * zz + P[2]) /
                 ((((zz + Q[1]) * zz + Q[2]) * zz + Q[3]) * zz + Q[4]));
  else y = z;
  if ((j & 2) == 2) y = -1 / y;
  return y;
}

double lua_go_tan (double x) {
  return odd(x, tan_positive);
}

static double xatan (double x) {
  static const double P0 = -8.750608600031904122785e-01, P1 = -1.615753718733365076637e+01;
  static const double P2 = -7.500855792314704667340e+01, P3 = -1.228866684490136173410e+02;
  static const double P4 = -6.485021904942025371773e+01, Q0 = +2.485846490142306297962e+01;
  static const double Q1 = +1.650270098316988542046e+02, Q2 = +4.328810604912902668951e+02;
  static const double Q3 = +4.853903996359136964868e+02, Q4 = +1.945506571482613964425e+02;
  double z = x * x;
  z = z * ((((P0 * z + P1) * z + P2) * z + P3) * z + P4) / (((((z + Q0) * z + Q1) * z + Q2) * z + Q3) * z + Q4);
  return x * z + x;
}

static double satan (double x) {
  static const double Morebits = 6.123233995736765886130e-17;  /* pi/2 = PIO2 + Morebits */
  static const double Tan3pio8 = 2.41421356237309504880;  /* tan(3*pi/8) */
  if (x <= 0.66) return xatan(x);
  if (x > Tan3pio8) return PI_2 - xatan(1 / x) + Morebits;
  return PI_4 + xatan((x - 1) / (x + 1)) + 0.5 * Morebits;
}

double lua_go_atan (double x) {
  if (x == 0) return x;
  return x > 0 ? satan(x) : -satan(-x);
}

double lua_go_asin (double x) {
  int sign = 0;
  double temp;
  if (x == 0) return x;
  if (x < 0) {
    x = -x;
    sign = 1;
  }
  if (x > 1) return NAN;
  temp = sqrt(1 - x * x);
  temp = x > 0.7 ? PI_2 - satan(temp / x) : satan(x / temp);
  return sign ? -temp : temp;
}

double lua_go_acos (double x) {
  return PI_2 - lua_go_asin(x);
}

double lua_go_atan2 (double y, double x) {
  double q;
  if (isnan(y) || isnan(x)) return NAN;
  if (y == 0) return (x >= 0 && !signbit(x)) ? copysign(0, y) : copysign(PI, y);
  if (x == 0) return copysign(PI_2, y);
  if (isinf(x)) {
    if (x > 0) return isinf(y) ? copysign(PI_4, y) : copysign(0, y);
    return isinf(y) ? copysign(2.356194490192345, y) : copysign(PI, y);  /* 3*Pi/4 */
  }
  if (isinf(y)) return copysign(PI_2, y);
  q = lua_go_atan(y / x);
  if (x < 0) return q <= 0 ? q + PI : q - PI;
  return q;
}
