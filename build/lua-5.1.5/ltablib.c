/*
** $Id: ltablib.c,v 1.38.1.3 2008/02/14 16:46:58 roberto Exp $
** Library for Table Manipulation
** See Copyright Notice in lua.h
*/

/*
** kubectl-rollout-lua: rewritten as gopher-lua's table library (tablelib.go
** and table.go of the version the controller pins), on gopher-lua's array
** part (see ltable.c): only the functions it has (no foreach, foreachi or
** setn), the lengths and positions it uses, and Go's sort.Sort. Loops count
** as instructions (lua_librarystep), so the time limit stops them.
*/


#include <stddef.h>

#define ltablib_c
#define LUA_LIB

#include "lua.h"

#include "lauxlib.h"
#include "lualib.h"


#define aux_getn(L,n)	(luaL_checktype(L, n, LUA_TTABLE), luaL_getn(L, n))

/* values table.insert and table.remove move (with Go's copy in gopher-lua,
   about 0.25 ns each, where it runs an instruction in 80 ns) that count as an
   instruction, where one memmove moves them here */
#define GOCOPY_STEP	256


/* table.getn, and table.maxn: gopher-lua's maxn only reads its array part */
static int getn (lua_State *L) {
  lua_pushinteger(L, aux_getn(L, 1));
  return 1;
}


/*
** With two arguments, the value goes after the last non-nil one (a nil is
** not inserted). A position inside the array part moves the values from
** there to its end up one; any other position is a plain assignment.
*/
static int tinsert (lua_State *L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  switch (lua_gettop(L)) {
    case 1: {
      return luaL_error(L, "wrong number of arguments to " LUA_QL("insert"));
    }
    case 2: {
      if (!lua_isnil(L, 2))
        lua_rawseti(L, 1, luaL_getn(L, 1) + 1);
      return 0;
    }
    default: {
      lua_Integer pos = luaL_checkinteger(L, 2);
      int e = lua_goarraylen(L, 1);
      int i;
      lua_settop(L, 3);  /* further arguments are ignored */
      if (pos >= 1 && pos <= e) {
        lua_rawgeti(L, 1, e);
        lua_rawseti(L, 1, e + 1);  /* t[e+1] = t[e]: the array grows */
        if (lua_gocopy(L, 1, (int)pos + 1, (int)pos, e - (int)pos))
          lua_librarysteps(L, (e - (int)pos) / GOCOPY_STEP);
        else {
          for (i = e - 1; i >= pos; i--) {  /* move up elements */
            lua_rawgeti(L, 1, i);
            lua_rawseti(L, 1, i + 1);  /* t[i+1] = t[i] */
            lua_librarystep(L);
          }
        }
      }
      lua_pushnumber(L, (lua_Number)pos);
      lua_pushvalue(L, 3);
      lua_rawset(L, 1);  /* t[pos] = v */
      return 0;
    }
  }
}


/*
** Removes the last element of the array part (without a position, or with
** one below 1), nil or not; a position inside it moves the values after it
** down one; a position beyond it removes nothing. Always one result.
** gopher-lua's Remove works on the position minus 1 in Go's int, which wraps:
** -2^63 (what Go makes of NaN, infinities and numbers beyond int64) is past
** the end there, so it removes nothing.
*/
static int tremove (lua_State *L) {
  int e;
  lua_Integer i, pos;
  luaL_checktype(L, 1, LUA_TTABLE);
  e = lua_goarraylen(L, 1);
  i = lua_gettop(L) == 1 ? -1 : (lua_Integer)((size_t)luaL_checkinteger(L, 2) - 1);
  if (e == 0 || i >= e) {
    lua_pushnil(L);
    return 1;
  }
  pos = i < 0 ? e : i + 1;
  lua_rawgeti(L, 1, (int)pos);  /* result = t[pos] */
  if (lua_gocopy(L, 1, (int)pos, (int)pos + 1, e - (int)pos))
    lua_librarysteps(L, (e - (int)pos) / GOCOPY_STEP);
  else {
    for (; pos < e; pos++) {
      lua_rawgeti(L, 1, (int)pos + 1);
      lua_rawseti(L, 1, (int)pos);  /* t[pos] = t[pos+1] */
      lua_librarystep(L);
    }
  }
  lua_pushnil(L);
  lua_rawseti(L, 1, e);  /* t[e] = nil */
  lua_goarraypop(L, 1);
  return 1;
}


/*
** Within the length: a last index beyond it stops there, a first index below
** 1 starts at 1; with exactly three arguments, a first index outside
** 1..length gives "".
*/
static int tconcat (lua_State *L) {
  luaL_Buffer b;
  size_t lsep;
  const char *sep;
  lua_Integer i, first, last;
  int n;
  luaL_checktype(L, 1, LUA_TTABLE);
  sep = luaL_optlstring(L, 2, "", &lsep);
  n = luaL_getn(L, 1);
  i = luaL_optinteger(L, 3, 1);
  last = luaL_optinteger(L, 4, n);
  if (lua_gettop(L) == 3 && (i > n || i < 1)) {
    lua_pushliteral(L, "");
    return 1;
  }
  if (i > n) i = n;
  if (i < 1) i = 1;
  if (last > n) last = n;
  first = i;
  /* kubectl-rollout-lua: gopher-lua pushes every value and every separator
     on its registry, of 5120 values, before it joins them (i and last are
     within the length here, an int) */
  if (i <= last)
    lua_gocheckregistry(L, 2 * (last - i) + 1);
  luaL_buffinit(L, &b);
  for (; i <= last; i++) {
    lua_rawgeti(L, 1, (int)i);
    if (!lua_isstring(L, -1))
      return luaL_error(L, "invalid value (%s) at index %d in table for concat",
                        luaL_typename(L, -1), (int)i);
    if (i == first && i == last)
      return 1;  /* gopher-lua's concatenation returns one value as it is */
    luaL_addvalue(&b);
    if (i != last)
      luaL_addlstring(&b, sep, lsep);
    lua_librarystep(L);
  }
  luaL_pushresult(&b);
  return 1;
}



/*
** {======================================================
** Go's sort.Sort (pattern-defeating quicksort, sort/zsortinterface.go of Go
** 1.19) on the whole array part, nils included, as gopher-lua sorts:
** equal elements end up in the same order as in the controller, and a
** comparison function sees the same calls. Indices are Go's, from 0.
*/

enum { UNKNOWN_HINT, INCREASING_HINT, DECREASING_HINT };

static int less (lua_State *L, int i, int j) {
  int res;
  lua_librarystep(L);
  if (lua_isfunction(L, 2)) {
    lua_pushvalue(L, 2);
    lua_rawgeti(L, 1, i + 1);
    lua_rawgeti(L, 1, j + 1);
    lua_call(L, 2, 1);
    res = lua_toboolean(L, -1);
    lua_pop(L, 1);
  }
  else {
    lua_rawgeti(L, 1, i + 1);
    lua_rawgeti(L, 1, j + 1);
    res = lua_lessthan(L, -2, -1);
    lua_pop(L, 2);
  }
  return res;
}

static void swap (lua_State *L, int i, int j) {
  lua_rawgeti(L, 1, i + 1);
  lua_rawgeti(L, 1, j + 1);
  lua_rawseti(L, 1, i + 1);
  lua_rawseti(L, 1, j + 1);
}

static void insertion_sort (lua_State *L, int a, int b) {
  int i, j;
  for (i = a + 1; i < b; i++)
    for (j = i; j > a && less(L, j, j - 1); j--)
      swap(L, j, j - 1);
}

static void sift_down (lua_State *L, int lo, int hi, int first) {
  int root = lo;
  for (;;) {
    int child = 2 * root + 1;
    if (child >= hi)
      return;
    if (child + 1 < hi && less(L, first + child, first + child + 1))
      child++;
    if (!less(L, first + root, first + child))
      return;
    swap(L, first + root, first + child);
    root = child;
  }
}

static void heap_sort (lua_State *L, int a, int b) {
  int first = a, hi = b - a, i;
  for (i = (hi - 1) / 2; i >= 0; i--)
    sift_down(L, i, hi, first);
  for (i = hi - 1; i >= 0; i--) {
    swap(L, first, first + i);
    sift_down(L, 0, i, first);
  }
}

/* The median of data[a], data[b] and data[c] (Go's median, order2 inlined) */
static int median (lua_State *L, int a, int b, int c, int *swaps) {
  int t;
  if (less(L, b, a)) { t = a; a = b; b = t; (*swaps)++; }
  if (less(L, c, b)) { t = b; b = c; c = t; (*swaps)++; }
  if (less(L, b, a)) { t = a; a = b; b = t; (*swaps)++; }
  return b;
}

static int choose_pivot (lua_State *L, int a, int b, int *hint) {
  int l = b - a, swaps = 0;
  int i = a + l / 4 * 1, j = a + l / 4 * 2, k = a + l / 4 * 3;
  if (l >= 8) {
    if (l >= 50) {  /* Tukey's ninther */
      i = median(L, i - 1, i, i + 1, &swaps);
      j = median(L, j - 1, j, j + 1, &swaps);
      k = median(L, k - 1, k, k + 1, &swaps);
    }
    j = median(L, i, j, k, &swaps);
  }
  *hint = swaps == 0 ? INCREASING_HINT
        : swaps == 12 ? DECREASING_HINT : UNKNOWN_HINT;
  return j;
}

static void reverse_range (lua_State *L, int a, int b) {
  int i = a, j = b - 1;
  for (; i < j; i++, j--)
    swap(L, i, j);
}

/* Whether data[a:b] is sorted after at most five out-of-order pairs shifted */
static int partial_insertion_sort (lua_State *L, int a, int b) {
  int i = a + 1, step, j;
  for (step = 0; step < 5; step++) {
    while (i < b && !less(L, i, i - 1))
      i++;
    if (i == b)
      return 1;
    if (b - a < 50)
      return 0;
    swap(L, i, i - 1);
    if (i - a >= 2) {
      for (j = i - 1; j >= 1; j--) {  /* sic: 1, not a + 1, as in Go */
        if (!less(L, j, j - 1))
          break;
        swap(L, j, j - 1);
      }
    }
    if (b - i >= 2) {
      for (j = i + 1; j < b; j++) {
        if (!less(L, j, j - 1))
          break;
        swap(L, j, j - 1);
      }
    }
  }
  return 0;
}

static void break_patterns (lua_State *L, int a, int b) {
  int length = b - a;
  if (length >= 8) {
    unsigned long long random = (unsigned long long)length;  /* xorshift */
    unsigned long long modulus = 1;  /* the next power of two above length */
    int idx;
    while (modulus <= (unsigned long long)length)
      modulus <<= 1;
    for (idx = a + (length / 4) * 2 - 1; idx <= a + (length / 4) * 2 + 1; idx++) {
      int other;
      random ^= random << 13;
      random ^= random >> 17;
      random ^= random << 5;
      other = (int)(random & (modulus - 1));
      if (other >= length)
        other -= length;
      swap(L, idx, a + other);
    }
  }
}

static int partition_equal (lua_State *L, int a, int b, int pivot) {
  int i = a + 1, j = b - 1;
  swap(L, a, pivot);
  for (;;) {
    while (i <= j && !less(L, a, i))
      i++;
    while (i <= j && less(L, a, j))
      j--;
    if (i > j)
      break;
    swap(L, i, j);
    i++;
    j--;
  }
  return i;
}

static int partition (lua_State *L, int a, int b, int pivot, int *already) {
  int i = a + 1, j = b - 1;
  swap(L, a, pivot);
  while (i <= j && less(L, i, a))
    i++;
  while (i <= j && !less(L, j, a))
    j--;
  if (i > j) {
    swap(L, j, a);
    *already = 1;
    return j;
  }
  swap(L, i, j);
  i++;
  j--;
  for (;;) {
    while (i <= j && less(L, i, a))
      i++;
    while (i <= j && !less(L, j, a))
      j--;
    if (i > j)
      break;
    swap(L, i, j);
    i++;
    j--;
  }
  swap(L, j, a);
  *already = 0;
  return j;
}

static void pdqsort (lua_State *L, int a, int b, int limit) {
  int was_balanced = 1, was_partitioned = 1;
  for (;;) {
    int length = b - a, pivot, hint, mid;
    if (length <= 12) {
      insertion_sort(L, a, b);
      return;
    }
    if (limit == 0) {
      heap_sort(L, a, b);
      return;
    }
    if (!was_balanced) {
      break_patterns(L, a, b);
      limit--;
    }
    pivot = choose_pivot(L, a, b, &hint);
    if (hint == DECREASING_HINT) {
      reverse_range(L, a, b);
      pivot = (b - 1) - (pivot - a);
      hint = INCREASING_HINT;
    }
    if (was_balanced && was_partitioned && hint == INCREASING_HINT &&
        partial_insertion_sort(L, a, b))
      return;
    if (a > 0 && !less(L, a - 1, pivot)) {  /* many equal elements */
      a = partition_equal(L, a, b, pivot);
      continue;
    }
    mid = partition(L, a, b, pivot, &was_partitioned);
    if (mid - a < b - mid) {
      was_balanced = mid - a >= length / 8;
      pdqsort(L, a, mid, limit);
      a = mid + 1;
    }
    else {
      was_balanced = b - mid >= length / 8;
      pdqsort(L, mid + 1, b, limit);
      b = mid;
    }
  }
}

static int sort (lua_State *L) {
  int n, limit = 0;
  luaL_checktype(L, 1, LUA_TTABLE);
  if (lua_gettop(L) != 1)
    luaL_checktype(L, 2, LUA_TFUNCTION);
  lua_settop(L, 2);
  n = lua_goarraylen(L, 1);
  if (n > 1) {
    while ((n >> limit) != 0)  /* Go's bits.Len */
      limit++;
    pdqsort(L, 0, n, limit);
  }
  return 0;
}

/* }====================================================== */


static const luaL_Reg tab_funcs[] = {
  {"concat", tconcat},
  {"getn", getn},
  {"maxn", getn},
  {"insert", tinsert},
  {"remove", tremove},
  {"sort", sort},
  {NULL, NULL}
};


LUALIB_API int luaopen_table (lua_State *L) {
  luaL_register(L, LUA_TABLIBNAME, tab_funcs);
  return 1;
}
