/*
** $Id: lstrlib.c,v 1.132.1.5 2010/05/14 15:34:19 roberto Exp $
** Standard library for string operations and pattern-matching
** See Copyright Notice in lua.h
*/


#include <ctype.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define lstrlib_c
#define LUA_LIB

#include "lua.h"

#include "lauxlib.h"
#include "lualib.h"


/* macro to `unsign' a character */
#define uchar(c)        ((unsigned char)(c))



static int str_len (lua_State *L) {
  size_t l;
  luaL_checklstring(L, 1, &l);
  lua_pushinteger(L, l);
  return 1;
}


/* kubectl-rollout-lua: gopher-lua's luaIndex2StringIndex, positions from 0 */
static lua_Integer go_strindex (size_t len, lua_Integer i, int start) {
  if (start && i != 0) i = (lua_Integer)((size_t)i - 1);  /* Go's int wraps */
  if (i < 0) i = (lua_Integer)len + i + 1;
  if (i < 0) i = 0;
  if (!start && i > (lua_Integer)len) i = (lua_Integer)len;
  return i;
}


/* kubectl-rollout-lua: gopher-lua's strSub (see go_strindex) */
static int str_sub (lua_State *L) {
  size_t l;
  const char *s = luaL_checklstring(L, 1, &l);
  lua_Integer start = go_strindex(l, luaL_checkinteger(L, 2), 1);
  lua_Integer end = go_strindex(l, luaL_optinteger(L, 3, -1), 0);
  if (start >= (lua_Integer)l || end < start) lua_pushliteral(L, "");
  else lua_pushlstring(L, s + start, (size_t)(end - start));
  return 1;
}


static int str_reverse (lua_State *L) {
  size_t l;
  luaL_Buffer b;
  const char *s = luaL_checklstring(L, 1, &l);
  luaL_buffinit(L, &b);
  while (l--) luaL_addchar(&b, s[l]);
  luaL_pushresult(&b);
  return 1;
}


static int str_lower (lua_State *L) {
  size_t l;
  size_t i;
  luaL_Buffer b;
  const char *s = luaL_checklstring(L, 1, &l);
  luaL_buffinit(L, &b);
  for (i=0; i<l; i++)
    luaL_addchar(&b, tolower(uchar(s[i])));
  luaL_pushresult(&b);
  return 1;
}


static int str_upper (lua_State *L) {
  size_t l;
  size_t i;
  luaL_Buffer b;
  const char *s = luaL_checklstring(L, 1, &l);
  luaL_buffinit(L, &b);
  for (i=0; i<l; i++)
    luaL_addchar(&b, toupper(uchar(s[i])));
  luaL_pushresult(&b);
  return 1;
}

/*
** kubectl-rollout-lua: the count has 64 bits, as gopher-lua's, so that
** string.rep("x", 2^31) runs out of memory (or time) as there instead of
** returning "" (an int count wraps to a negative one); Go's strings.Repeat
** returns an empty string at once, whatever the count. Every REP_STEP bytes
** built count as an instruction (lua_librarysteps): the time limit stops a
** long one, and the controller's time a script takes is estimated from the
** count (src/lua/mod.rs), where Go's strings.Repeat copies about that many
** bytes in the time of an instruction (measured with the oracle: 2.1 ms for
** 3 MiB, against 45 ns an instruction).
*/
#define REP_STEP	64

static int str_rep (lua_State *L) {
  size_t l;
  size_t uncounted = 0;  /* bytes built and not yet counted */
  luaL_Buffer b;
  const char *s = luaL_checklstring(L, 1, &l);
  lua_Integer n = luaL_checkinteger(L, 2);
  luaL_buffinit(L, &b);
  while (l > 0 && n-- > 0) {
    luaL_addlstring(&b, s, l);
    uncounted += l;
    if (uncounted >= REP_STEP) {
      lua_librarysteps(L, (int)(uncounted / REP_STEP));
      uncounted %= REP_STEP;
    }
  }
  luaL_pushresult(&b);
  return 1;
}


/*
** kubectl-rollout-lua: gopher-lua's strByte: one byte when given a position
** alone, otherwise the bytes up to the end (-1 unless given), so that
** string.byte(s) is every byte of s; nothing before the start.
*/
static int str_byte (lua_State *L) {
  size_t l;
  const char *s = luaL_checklstring(L, 1, &l);
  lua_Integer start = (lua_Integer)((size_t)luaL_optinteger(L, 2, 1) - 1);  /* Go's int wraps */
  lua_Integer end = luaL_optinteger(L, 3, -1);
  lua_Integer len = (lua_Integer)l, i;
  if (start < 0) start = len + start + 1;
  if (end < 0) end = len + end + 1;
  if (lua_gettop(L) == 2) {
    if (start < 0 || start >= len) return 0;
    lua_pushinteger(L, uchar(s[start]));
    return 1;
  }
  if (start < 0) start = 0;
  if (end > len) end = len;
  if (end < 0 || end <= start || start >= len) return 0;
  /* kubectl-rollout-lua: gopher-lua pushes them on its registry, of 5120 */
  lua_gocheckregistry(L, end - start);
  if (end - start >= INT_MAX) luaL_error(L, "string slice too long");
  luaL_checkstack(L, (int)(end - start), "string slice too long");
  for (i = start; i < end; i++)
    lua_pushinteger(L, uchar(s[i]));
  return (int)(end - start);
}


/* kubectl-rollout-lua: gopher-lua's strChar keeps the low byte of each */
static int str_char (lua_State *L) {
  int n = lua_gettop(L);  /* number of arguments */
  int i;
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  for (i=1; i<=n; i++)
    luaL_addchar(&b, (char)(unsigned char)luaL_checkinteger(L, i));
  luaL_pushresult(&b);
  return 1;
}


static int writer (lua_State *L, const void* b, size_t size, void* B) {
  (void)L;
  luaL_addlstring((luaL_Buffer*) B, (const char *)b, size);
  return 0;
}


static int str_dump (lua_State *L) {
  luaL_Buffer b;
  luaL_checktype(L, 1, LUA_TFUNCTION);
  lua_settop(L, 1);
  luaL_buffinit(L,&b);
  if (lua_dump(L, writer, &b) != 0)
    luaL_error(L, "unable to dump given function");
  luaL_pushresult(&b);
  return 1;
}



/*
** {======================================================
** PATTERN MATCHING
** =======================================================
*/

/*
** kubectl-rollout-lua: gopher-lua's pattern matching (its pm/pm.go) and the
** functions of its stringlib.go that use it (find, match, gmatch, gsub),
** ported, replacing Lua 5.1's matcher: gopher-lua parses a pattern its own
** way (no %f, a range only between two plain characters, `^' an anchor for
** gmatch and gsub too, a malformed pattern failing or matching nothing
** where Lua 5.1 does the other) and its functions differ in what they return
** (match with no match returns no value at all, gsub's count of 0 or less
** replaces every match, a replacement that is not a string nor a number is
** ""). The parser is pm.go's scanner and parsePattern, emitting its
** instructions directly; the virtual machine is its recursiveVM with an
** explicit backtracking stack instead of recursion (the C stack is small;
** the stack here is a userdata, so the memory limit bounds it); each of its
** steps counts as an instruction for the time limit (lua_librarystep).
*/

#define L_ESC		'%'

#define GO_EOS		(-1)

/* the scanner of pm.go, whose quirks decide how malformed patterns parse */
typedef struct GoScanner {
  const char *src;
  int len, pos, started;
} GoScanner;

static int sc_nextpos (GoScanner *sc) {
  if (sc->pos == GO_EOS || sc->pos >= sc->len - 1) return GO_EOS;
  return sc->started ? sc->pos + 1 : 0;
}

static int sc_next (GoScanner *sc) {
  if (!sc->started) {
    sc->started = 1;
    if (sc->len == 0) sc->pos = GO_EOS;
  }
  else sc->pos = sc_nextpos(sc);
  return sc->pos == GO_EOS ? GO_EOS : uchar(sc->src[sc->pos]);
}

static int sc_peek (GoScanner *sc) {
  int cureof = sc->pos == GO_EOS;
  int ch = sc_next(sc);
  if (!cureof) {
    if (sc->pos == GO_EOS) sc->pos = sc->len - 1;
    else if (--sc->pos < 0) {
      sc->pos = 0;
      sc->started = 0;
    }
  }
  return ch;
}

/* instructions (pm.go's opCode) */
enum { OP_CHAR, OP_MATCH, OP_TAILMATCH, OP_JMP, OP_SPLIT, OP_SAVE, OP_PSAVE,
       OP_BRACE, OP_NUMBER };

/* what an OP_CHAR matches: any byte, one byte (GO_EOS: none), a class
   such as %a (or a byte after %), or a set, as a bitmap */
enum { CL_ANY, CL_CHAR, CL_SINGLE, CL_SET };

typedef struct GoInst {
  unsigned char op, cl;
  int c;  /* the byte, class letter or set index of an OP_CHAR */
  int x, y;  /* operands */
} GoInst;

typedef unsigned char GoSet[32];

typedef struct GoPattern {
  GoInst *code;
  GoSet *sets;
  int *open;  /* the closing capture slot of each capture being parsed */
  int ncode, nsets, nopen;
  int ncaps;  /* capture slots, 2 per capture and 2 for the whole match */
  int musthead;
} GoPattern;

/* pm.go's singleClass.Matches */
static int go_classmatch (int cl, int ch) {
  int res;
  switch (cl) {
    case 'a': case 'A': res = ('A' <= ch && ch <= 'Z') || ('a' <= ch && ch <= 'z'); break;
    case 'c': case 'C': res = ch <= 0x1F || ch == 0x7F; break;
    case 'd': case 'D': res = '0' <= ch && ch <= '9'; break;
    case 'l': case 'L': res = 'a' <= ch && ch <= 'z'; break;
    case 'p': case 'P': res = (0x21 <= ch && ch <= 0x2f) || (0x3a <= ch && ch <= 0x40) ||
                              (0x5b <= ch && ch <= 0x60) || (0x7b <= ch && ch <= 0x7e); break;
    case 's': case 'S': res = ch == ' ' || ch == '\f' || ch == '\n' || ch == '\r' ||
                              ch == '\t' || ch == '\v'; break;
    case 'u': case 'U': res = 'A' <= ch && ch <= 'Z'; break;
    case 'w': case 'W': res = ('0' <= ch && ch <= '9') || ('A' <= ch && ch <= 'Z') ||
                              ('a' <= ch && ch <= 'z'); break;
    case 'x': case 'X': res = ('0' <= ch && ch <= '9') || ('a' <= ch && ch <= 'f') ||
                              ('A' <= ch && ch <= 'F'); break;
    case 'z': case 'Z': res = ch == 0; break;
    default: return ch == cl;
  }
  return ('A' <= cl && cl <= 'Z') ? !res : res;
}

static int go_instmatch (const GoPattern *p, const GoInst *in, int ch) {
  switch (in->cl) {
    case CL_ANY: return 1;
    case CL_CHAR: return in->c == ch;
    case CL_SINGLE: return go_classmatch(in->c, ch);
    default: return (p->sets[in->c][ch >> 3] >> (ch & 7)) & 1;
  }
}

/* a member of a set being parsed: a byte, a class, a range of bytes, or
   nothing (a range with a class at either end, which pm.go never matches) */
typedef struct GoMember { int kind, lo, hi; } GoMember;
enum { MB_CHAR, MB_SINGLE, MB_RANGE, MB_NONE };

static void go_addmember (GoSet set, GoMember m) {
  int ch, hi = m.kind == MB_RANGE ? m.hi : m.lo;
  if (m.kind == MB_NONE) return;
  for (ch = m.kind == MB_SINGLE ? 0 : m.lo; ch <= (m.kind == MB_SINGLE ? 255 : hi); ch++)
    if (m.kind != MB_SINGLE || go_classmatch(m.lo, ch))
      set[ch >> 3] |= (unsigned char)(1 << (ch & 7));
}

/* pm.go's parseClass with allowset false: a member of a set */
static GoMember go_member (lua_State *L, GoScanner *sc) {
  GoMember m;
  int ch = sc_next(sc);
  m.hi = 0;
  if (ch == GO_EOS) luaL_error(L, "malformed pattern (unexpected end)");
  if (ch == L_ESC) {
    m.kind = MB_SINGLE;
    m.lo = sc_next(sc);
  }
  else {
    m.kind = MB_CHAR;
    m.lo = ch;
  }
  return m;
}

/* pm.go's parseClassSet, after the `[': the set's index */
static int go_parseset (lua_State *L, GoScanner *sc, GoPattern *p) {
  unsigned char *set = p->sets[p->nsets];
  GoMember pending[2];  /* the last two members, which a range joins */
  int npending = 0, n = 0, isrange = 0, isnot = 0, i;
  memset(set, 0, sizeof(GoSet));
  if (sc_peek(sc) == '^') {
    isnot = 1;
    sc_next(sc);
  }
  for (;;) {
    int ch = sc_peek(sc);
    if (ch == GO_EOS) luaL_error(L, "malformed pattern (missing " LUA_QL("]") ")");
    if (ch == ']' && n > 0) {
      sc_next(sc);
      break;
    }
    if (ch == '-' && n > 0) {
      sc_next(sc);
      isrange = 1;
      continue;
    }
    if (npending == 2) {
      go_addmember(set, pending[0]);
      pending[0] = pending[1];
      npending = 1;
    }
    pending[npending++] = go_member(L, sc);
    n++;
    if (isrange) {
      GoMember range;
      range.kind = MB_NONE;
      range.lo = range.hi = 0;
      if (pending[0].kind == MB_CHAR && pending[1].kind == MB_CHAR) {
        range.kind = MB_RANGE;
        range.lo = pending[0].lo;
        range.hi = pending[1].lo;
      }
      pending[0] = range;
      npending = 1;
      n--;
      isrange = 0;
    }
  }
  for (i = 0; i < npending; i++) go_addmember(set, pending[i]);
  if (isrange) {
    GoMember dash;
    dash.kind = MB_CHAR;
    dash.lo = '-';
    dash.hi = 0;
    go_addmember(set, dash);
  }
  if (isnot)
    for (i = 0; i < 32; i++) set[i] = (unsigned char)~set[i];
  return p->nsets++;
}

static GoInst *go_emit (GoPattern *p, int op, int x, int y) {
  GoInst *in = &p->code[p->ncode++];
  in->op = (unsigned char)op;
  in->cl = CL_ANY;
  in->c = 0;
  in->x = x;
  in->y = y;
  return in;
}

/* an OP_CHAR of the character `ch' itself; returns its place */
static int go_literal (GoPattern *p, int ch) {
  GoInst *in = go_emit(p, OP_CHAR, 0, 0);
  in->cl = CL_CHAR;
  in->c = ch;
  return p->ncode - 1;
}

/* pm.go's parseClass with allowset true: an OP_CHAR */
static void go_single (lua_State *L, GoScanner *sc, GoPattern *p) {
  GoInst *in;
  int ch = sc_next(sc);
  if (ch == GO_EOS) luaL_error(L, "malformed pattern (unexpected end)");
  if (ch == '[') {
    int set = go_parseset(L, sc, p);
    in = go_emit(p, OP_CHAR, 0, 0);
    in->cl = CL_SET;
    in->c = set;
    return;
  }
  in = go_emit(p, OP_CHAR, 0, 0);
  if (ch == L_ESC) {
    in->cl = CL_SINGLE;
    in->c = sc_next(sc);
  }
  else if (ch != '.') {
    in->cl = CL_CHAR;
    in->c = ch;
  }
}

/* the repetition `op' of the OP_CHAR at `at', the last instruction
   (pm.go's compilePattern of a repeatPattern) */
static void go_repeat (GoPattern *p, int at, int op) {
  GoInst single = p->code[at];
  p->ncode = at;
  switch (op) {
    case '*':
      go_emit(p, OP_SPLIT, at + 1, at + 3);
      p->code[p->ncode++] = single;
      go_emit(p, OP_JMP, at, 0);
      break;
    case '+':
      p->code[p->ncode++] = single;
      go_emit(p, OP_SPLIT, at, at + 2);
      break;
    case '-':
      go_emit(p, OP_SPLIT, at + 3, at + 1);
      p->code[p->ncode++] = single;
      go_emit(p, OP_JMP, at, 0);
      break;
    default:  /* '?' */
      go_emit(p, OP_SPLIT, at + 1, at + 2);
      p->code[p->ncode++] = single;
      break;
  }
}

/* pm.go's parsePattern and compilePattern: `single' is the instruction of
   the last item of the sequence being parsed when that is a single class
   (-1 otherwise), which a following `*', `+', `-' or `?' repeats */
static void go_compile (lua_State *L, const char *pat, size_t len, GoPattern *p) {
  GoScanner sc;
  int single = -1;
  sc.src = pat;
  sc.len = (int)len;
  sc.pos = sc.started = 0;
  p->ncode = p->nsets = p->nopen = 0;
  p->ncaps = 2;
  p->musthead = 0;
  go_emit(p, OP_SAVE, 0, 0);
  if (sc_peek(&sc) == '^') {
    sc_next(&sc);
    p->musthead = 1;
  }
  for (;;) {
    int ch = sc_peek(&sc);
    switch (ch) {
      case L_ESC: {
        int savedpos = sc.pos, savedstarted = sc.started;
        sc_next(&sc);
        ch = sc_peek(&sc);
        if (ch == '0') luaL_error(L, "invalid capture index");
        if ('1' <= ch && ch <= '9') {
          go_emit(p, OP_NUMBER, sc_next(&sc) - '0', 0);
          single = -1;
        }
        else if (ch == 'b') {
          int open, close;
          sc_next(&sc);
          open = sc_next(&sc);
          close = sc_next(&sc);
          go_emit(p, OP_BRACE, open, close);
          single = -1;
        }
        else {
          sc.pos = savedpos;
          sc.started = savedstarted;
          single = p->ncode;
          go_single(L, &sc, p);
        }
        break;
      }
      case '.': case '[': case ']': {
        single = p->ncode;
        go_single(L, &sc, p);
        break;
      }
      case ')': {
        if (p->nopen == 0) luaL_error(L, "invalid pattern capture");
        sc_next(&sc);  /* pm.go: the capture's sequence ends, and its `)' is read */
        go_emit(p, OP_SAVE, p->open[--p->nopen], 0);
        single = -1;
        break;
      }
      case '(': {
        sc_next(&sc);
        if (sc_peek(&sc) == ')') {
          sc_next(&sc);
          go_emit(p, OP_PSAVE, p->ncaps, 0);
        }
        else {
          go_emit(p, OP_SAVE, p->ncaps, 0);
          p->open[p->nopen++] = p->ncaps + 1;
        }
        p->ncaps += 2;
        single = -1;
        break;
      }
      case '*': case '+': case '-': case '?': {
        sc_next(&sc);
        if (single >= 0) {
          go_repeat(p, single, ch);
          single = -1;
        }
        else single = go_literal(p, ch);
        break;
      }
      case '$': {
        int next = sc_nextpos(&sc);
        if (p->nopen == 0 && (next == sc.len - 1 || next == GO_EOS)) {
          go_emit(p, OP_TAILMATCH, 0, 0);  /* the last byte: see GO_EOS */
          single = -1;
        }
        else single = go_literal(p, ch);
        sc_next(&sc);
        break;
      }
      case GO_EOS: {
        sc_next(&sc);
        if (p->nopen > 0) luaL_error(L, "unfinished capture");
        if (p->code[p->ncode - 1].op == OP_TAILMATCH) {
          p->ncode--;  /* MustTail: save the end, then look at it */
          go_emit(p, OP_SAVE, 1, 0);
          go_emit(p, OP_TAILMATCH, 0, 0);
        }
        go_emit(p, OP_SAVE, 1, 0);
        go_emit(p, OP_MATCH, 0, 0);
        return;
      }
      default: {
        sc_next(&sc);
        single = go_literal(p, ch);
        break;
      }
    }
  }
}


/*
** A growable array in a userdata at a stack slot, which starts in memory of
** the caller's (a short pattern on a short subject allocates nothing).
*/
typedef struct GoBuf {
  char *p;
  size_t size, used;
  int slot;
} GoBuf;

static void gobuf_init (lua_State *L, GoBuf *b, void *initial, size_t size) {
  lua_pushnil(L);
  b->slot = lua_gettop(L);
  b->p = (char *)initial;
  b->size = size;
  b->used = 0;
}

/* room for `n' more bytes */
static void *gobuf_room (lua_State *L, GoBuf *b, size_t n) {
  if (b->size - b->used < n) {
    size_t size = b->size * 2 > b->used + n ? b->size * 2 : b->used + n;
    char *p = (char *)lua_newuserdata(L, size);
    memcpy(p, b->p, b->used);
    lua_replace(L, b->slot);
    b->p = p;
    b->size = size;
  }
  return b->p + b->used;
}


#define GO_SHORT	48  /* patterns this long are compiled on the C stack */

/* a compiled pattern in `mem' (GO_SHORT) or a userdata pushed for it */
static void go_pattern (lua_State *L, const char *pat, size_t len,
                        GoPattern *p, void *mem) {
  /* bounds: an item of n bytes makes at most 1.5 n instructions, plus 5
     for the whole pattern; a set takes 2 bytes at least */
  size_t ncode = 2 * len + 5, nsets = len / 2 + 1, nopen = len + 1;
  size_t size = ncode * sizeof(GoInst) + nsets * sizeof(GoSet) + nopen * sizeof(int);
  char *m = len <= GO_SHORT ? (char *)mem : (char *)lua_newuserdata(L, size);
  p->code = (GoInst *)m;
  p->sets = (GoSet *)(m + ncode * sizeof(GoInst));
  p->open = (int *)(m + ncode * sizeof(GoInst) + nsets * sizeof(GoSet));
  go_compile(L, pat, len, p);
}

#define GO_PATTERN_MEM	((2 * GO_SHORT + 5) * sizeof(GoInst) + \
                         (GO_SHORT / 2 + 1) * sizeof(GoSet) + (GO_SHORT + 1) * sizeof(int))


/*
** kubectl-rollout-lua: a scan over the subject string counts one instruction
** (lua_librarystep) per SCAN_STEP characters, so that with backtracking no
** single step of a search takes long.
*/
#define SCAN_STEP	1024


/*
** kubectl-rollout-lua: each candidate position, and each SCAN_STEP bytes
** compared there, counts as an instruction (lua_librarystep): a plain search
** can take time quadratic in the lengths.
*/
static int lmemequal (lua_State *L, const char *a, const char *b, size_t l) {
  for (; l > SCAN_STEP; a += SCAN_STEP, b += SCAN_STEP, l -= SCAN_STEP) {
    if (memcmp(a, b, SCAN_STEP) != 0) return 0;
    lua_librarystep(L);
  }
  return memcmp(a, b, l) == 0;
}


static const char *lmemfind (lua_State *L, const char *s1, size_t l1,
                               const char *s2, size_t l2) {
  if (l2 == 0) return s1;  /* empty strings are everywhere */
  else if (l2 > l1) return NULL;  /* avoids a negative `l1' */
  else {
    const char *init;  /* to search for a `*s2' inside `s1' */
    l2--;  /* 1st char will be checked by `memchr' */
    l1 = l1-l2;  /* `s2' cannot be found after that */
    while (l1 > 0 && (init = (const char *)memchr(s1, *s2, l1)) != NULL) {
      init++;   /* 1st char is already checked */
      lua_librarystep(L);  /* kubectl-rollout-lua */
      if (lmemequal(L, init, s2+1, l2))
        return init-1;
      else {  /* correct `l1' and `s1' to try again */
        l1 -= init-s1;
        s1 = init;
      }
    }
    return NULL;  /* not found */
  }
}


/* the state of one search: pm.go's MatchData is `caps' (its captures with
   their layout: position << 1, 1 for a position capture) and `ncaplen' */
typedef struct GoMatch {
  lua_State *L;
  const char *src;
  ptrdiff_t len;
  GoPattern *p;
  ptrdiff_t *caps;
  int caplen;
  int steps;  /* instructions run and not yet counted (lua_librarysteps) */
  GoBuf stack;  /* backtracking: (pc, sp) to try, or (-1 - slot, value) to restore */
} GoMatch;

static void go_push (GoMatch *m, ptrdiff_t a, ptrdiff_t b) {
  ptrdiff_t *e = (ptrdiff_t *)gobuf_room(m->L, &m->stack, 2 * sizeof(ptrdiff_t));
  e[0] = a;
  e[1] = b;
  m->stack.used += 2 * sizeof(ptrdiff_t);
}

/* grows pm.go's captures to `n' slots, new ones 0 */
static void go_grow (GoMatch *m, int n) {
  while (m->caplen < n) m->caps[m->caplen++] = 0;
}

static ptrdiff_t go_cap (GoMatch *m, int i) { return m->caps[i] >> 1; }

/* pm.go's recursiveVM from `sp': the end of the match, or -1 */
static ptrdiff_t go_run (GoMatch *m, ptrdiff_t sp) {
  const GoPattern *p = m->p;
  const unsigned char *src = (const unsigned char *)m->src;
  int pc = 0;
  m->caplen = 0;
  m->stack.used = 0;
  for (;;) {
    const GoInst *in = &p->code[pc];
    if (++m->steps == SCAN_STEP) {
      lua_librarysteps(m->L, m->steps);
      m->steps = 0;
    }
    switch (in->op) {
      case OP_CHAR:
        if (sp >= m->len || !go_instmatch(p, in, src[sp])) goto fail;
        pc++;
        sp++;
        continue;
      case OP_MATCH:
        return sp;
      case OP_TAILMATCH:
        if (sp >= m->len) return sp;
        goto fail;
      case OP_JMP:
        pc = in->x;
        continue;
      case OP_SPLIT:
        go_push(m, in->y, sp);
        pc = in->x;
        continue;
      case OP_SAVE:
        go_grow(m, in->x + 1);
        go_push(m, -1 - in->x, m->caps[in->x]);
        m->caps[in->x] = sp << 1;
        pc++;
        continue;
      case OP_PSAVE:
        go_grow(m, in->x + 2);
        m->caps[in->x] = m->caps[in->x + 1] = ((sp + 1) << 1) | 1;
        pc++;
        continue;
      case OP_BRACE: {
        int count = 1;
        if (sp >= m->len || src[sp] != in->x) goto fail;
        for (sp = sp + 1; sp < m->len; sp++) {
          if (src[sp] == in->y) count--;
          if (count == 0) break;
          if (src[sp] == in->x) count++;
          if (sp % SCAN_STEP == 0) lua_librarystep(m->L);
        }
        if (count != 0) goto fail;
        pc++;
        sp++;
        continue;
      }
      case OP_NUMBER: {
        int idx = in->x * 2;
        ptrdiff_t from, to;
        if (idx >= m->caplen - 1) luaL_error(m->L, "invalid capture index");
        from = go_cap(m, idx);
        to = go_cap(m, idx + 1);
        if (from > to || to > m->len)  /* a Go panic there */
          luaL_error(m->L, "slice bounds out of range");
        if (to - from > m->len - sp ||
            !lmemequal(m->L, m->src + from, m->src + sp, (size_t)(to - from)))
          goto fail;
        pc++;
        sp += to - from;
        continue;
      }
    }
  fail:
    for (;;) {
      ptrdiff_t *e;
      if (m->stack.used == 0) return -1;
      m->stack.used -= 2 * sizeof(ptrdiff_t);
      e = (ptrdiff_t *)(m->stack.p + m->stack.used);
      if (e[0] >= 0) {
        pc = (int)e[0];
        sp = e[1];
        break;
      }
      m->caps[-1 - e[0]] = e[1];
    }
  }
}

#define GO_STACK	64  /* backtracking entries kept on the C stack */

/* the search state of a pattern compiled in `p' over `s' */
static void go_match_init (lua_State *L, GoMatch *m, GoPattern *p,
                           const char *s, size_t len, ptrdiff_t *caps,
                           void *stack) {
  m->L = L;
  m->src = s;
  m->len = (ptrdiff_t)len;
  m->p = p;
  m->caps = caps;
  m->caplen = 0;
  m->steps = 0;
  gobuf_init(L, &m->stack, stack, GO_STACK * 2 * sizeof(ptrdiff_t));
}

/* the captures of a pattern compiled in `p': on the C stack if few */
#define GO_CAPS	34
static ptrdiff_t *go_caps (lua_State *L, GoPattern *p, ptrdiff_t *mem) {
  return p->ncaps <= GO_CAPS ? mem :
         (ptrdiff_t *)lua_newuserdata(L, p->ncaps * sizeof(ptrdiff_t));
}

/* a pattern compiled and a match over a subject, in the caller's frame
   (what does not fit there in userdata) */
typedef struct GoSearch {
  GoPattern p;
  GoMatch m;
  ptrdiff_t pmem[GO_PATTERN_MEM / sizeof(ptrdiff_t) + 1];
  ptrdiff_t capmem[GO_CAPS], stack[GO_STACK * 2];
} GoSearch;

static void go_prepare (lua_State *L, GoSearch *g, const char *pat, size_t lp,
                        const char *s, size_t ls) {
  go_pattern(L, pat, lp, &g->p, g->pmem);
  go_match_init(L, &g->m, &g->p, s, ls, go_caps(L, &g->p, g->capmem), g->stack);
}

/* the slot of the values a match gives: its captures, or the whole match
   when there are none */
static int go_values (GoMatch *m) {
  return m->caplen == 2 ? 0 : 2;
}

/*
** pm.go's Find, one match at a time: the next match from `*sp' on (its
** captures in m->caps), moving `*sp' past it; 0 when there is none.
** `*found' counts the matches, `limit' is Find's: it stops after the
** attempt that makes the count equal to it, or after the first attempt of
** an anchored pattern.
*/
static int go_find (GoMatch *m, ptrdiff_t *sp, lua_Integer *found,
                    lua_Integer limit, int *done) {
  while (!*done && *sp <= m->len) {
    ptrdiff_t e = go_run(m, *sp);
    lua_librarysteps(m->L, m->steps);
    m->steps = 0;
    (*sp)++;
    if (e >= 0) {
      if (*sp < e) *sp = e;
      (*found)++;
    }
    if (*found == limit || m->p->musthead) *done = 1;
    if (e >= 0) return 1;
  }
  return 0;
}

/* pushes capture `i' (a slot: 2 for the first) of the match in `m' */
static void go_pushcapture (GoMatch *m, int i) {
  if (m->caps[i] & 1)
    lua_pushinteger(m->L, go_cap(m, i));
  else
    lua_pushlstring(m->L, m->src + go_cap(m, i),
                    (size_t)(go_cap(m, i + 1) - go_cap(m, i)));
}

/* pushes the captures of the match in `m', from slot `from' on */
static int go_pushcaptures (GoMatch *m, int from) {
  int i;
  luaL_checkstack(m->L, m->caplen / 2, "too many captures");
  for (i = from; i < m->caplen; i += 2) go_pushcapture(m, i);
  return (m->caplen - from) / 2;
}


/* one search with the pattern at argument 2 over the string at argument 1,
   from `init' on: what find and match return */
static int go_search (lua_State *L, const char *s, size_t ls, lua_Integer init,
                      int find) {
  size_t lp;
  const char *pat = lua_tolstring(L, 2, &lp);
  GoSearch search;
  GoMatch *m = &search.m;
  ptrdiff_t sp = (ptrdiff_t)init;
  lua_Integer found = 0;
  int done = 0;
  go_prepare(L, &search, pat, lp, s, ls);
  if (!go_find(m, &sp, &found, 1, &done)) {
    if (!find) return 0;  /* gopher-lua's match returns no value */
    lua_pushnil(L);
    return 1;
  }
  if (find) {
    lua_pushinteger(L, go_cap(m, 0) + 1);
    lua_pushinteger(L, go_cap(m, 1));
    return go_pushcaptures(m, 2) + 2;
  }
  return go_pushcaptures(m, go_values(m));
}


static int str_find (lua_State *L) {
  size_t ls, lp;
  const char *s = luaL_checklstring(L, 1, &ls);
  const char *p = luaL_checklstring(L, 2, &lp);
  lua_Integer init;
  if (lp == 0) {  /* whatever the rest */
    lua_pushinteger(L, 1);
    lua_pushinteger(L, 0);
    return 2;
  }
  init = go_strindex(ls, luaL_optinteger(L, 3, 1), 1);
  if (lua_gettop(L) == 4 && lua_toboolean(L, 4)) {  /* plain, if exactly 4 */
    const char *found;
    if (init > (lua_Integer)ls)  /* a Go panic there */
      luaL_error(L, "slice bounds out of range");
    found = lmemfind(L, s + init, ls - (size_t)init, p, lp);
    if (found == NULL) {
      lua_pushnil(L);
      return 1;
    }
    lua_pushinteger(L, found - s + 1);
    lua_pushinteger(L, found - s + lp);
    return 2;
  }
  return go_search(L, s, ls, init, 1);
}


static int str_match (lua_State *L) {
  size_t ls;
  const char *s = luaL_checklstring(L, 1, &ls);
  lua_Integer offset;
  luaL_checkstring(L, 2);
  offset = luaL_optinteger(L, 3, 1);
  if (offset < 0) offset = (lua_Integer)ls + offset + 1;
  if (--offset < 0) offset = 0;
  return go_search(L, s, ls, offset, 0);
}


/* what gmatch's iterator walks: every match, found when gmatch is called
   (gopher-lua's strMatchData), and the subject */
#define GO_GMATCH	0x676d6174  /* tells the state from other userdata */

typedef struct GoGmatch {
  int magic, ncaps;  /* slots per match */
  size_t pos, count;  /* the next match, how many */
  /* then `count' * `ncaps' captures (ptrdiff_t), then the subject */
} GoGmatch;

static ptrdiff_t *gmatch_caps (GoGmatch *g) {
  return (ptrdiff_t *)((char *)g + sizeof(GoGmatch)) + g->pos * g->ncaps;
}

static int gmatch_aux (lua_State *L) {
  GoGmatch *g = (GoGmatch *)lua_touserdata(L, 1);
  GoMatch m;
  if (g == NULL || lua_objlen(L, 1) < sizeof(GoGmatch) || g->magic != GO_GMATCH)
    luaL_typerror(L, 1, "userdata");
  if (g->pos == g->count) return 0;
  m.L = L;
  m.src = (const char *)((ptrdiff_t *)((char *)g + sizeof(GoGmatch)) + g->count * g->ncaps);
  m.caps = gmatch_caps(g);
  m.caplen = g->ncaps;
  g->pos++;
  return go_pushcaptures(&m, go_values(&m));
}


static int gmatch (lua_State *L) {
  size_t ls, lp;
  const char *s = luaL_checklstring(L, 1, &ls);
  const char *pat = luaL_checklstring(L, 2, &lp);
  GoSearch search;
  GoBuf found;
  GoGmatch *g;
  ptrdiff_t foundmem[GO_CAPS];
  ptrdiff_t sp = 0;
  lua_Integer count = 0;
  int done = 0;
  go_prepare(L, &search, pat, lp, s, ls);
  gobuf_init(L, &found, foundmem, sizeof(foundmem));
  while (go_find(&search.m, &sp, &count, -1, &done)) {
    size_t n = search.p.ncaps * sizeof(ptrdiff_t);
    memcpy(gobuf_room(L, &found, n), search.m.caps, n);
    found.used += n;
  }
  g = (GoGmatch *)lua_newuserdata(L, sizeof(GoGmatch) + found.used + ls);
  g->magic = GO_GMATCH;
  g->ncaps = search.p.ncaps;
  g->pos = 0;
  g->count = (size_t)count;
  memcpy((char *)g + sizeof(GoGmatch), found.p, found.used);
  memcpy((char *)g + sizeof(GoGmatch) + found.used, s, ls);
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_insert(L, -2);
  return 2;  /* the iterator and its state, as gopher-lua's */
}


/* gopher-lua's LVAsString of a replacement: a string or number as text,
   anything else "" */
static void go_addreplacement (lua_State *L, luaL_Buffer *b) {
  if (lua_type(L, -1) == LUA_TSTRING || lua_type(L, -1) == LUA_TNUMBER)
    luaL_addvalue(b);
  else lua_pop(L, 1);
}

/* gopher-lua's capturedString: slot `i' of the match in `m' as text */
static void go_addcapture (GoMatch *m, luaL_Buffer *b, int i) {
  if (i > 2 && i >= m->caplen) luaL_error(m->L, "invalid capture index");
  if (i >= m->caplen) i = 0;  /* %1 without captures: the whole match */
  if (m->caps[i] & 1) {
    lua_pushinteger(m->L, go_cap(m, i));
    luaL_addvalue(b);
  }
  else luaL_addlstring(b, m->src + go_cap(m, i), (size_t)(go_cap(m, i + 1) - go_cap(m, i)));
}

/* gopher-lua's strGsubStr for one match: `%' and a digit is a capture,
   `%%' a `%', `%' and another byte both, a `%' at the end itself */
static void go_addstring (GoMatch *m, luaL_Buffer *b, const char *r, size_t lr) {
  size_t i;
  for (i = 0; i < lr; i++) {
    if (r[i] != L_ESC || i + 1 == lr) luaL_addchar(b, r[i]);
    else if (r[++i] == L_ESC) luaL_addchar(b, L_ESC);
    else if (isdigit(uchar(r[i]))) go_addcapture(m, b, 2 * (r[i] - '0'));
    else {
      luaL_addchar(b, L_ESC);
      luaL_addchar(b, r[i]);
    }
  }
}

/* adds the match's replacement; returns whether it replaced the match (a
   function or table giving nil or false keeps it, which gopher-lua does not
   count among its replacements) */
static int go_addvalue (GoMatch *m, luaL_Buffer *b, int tr) {
  lua_State *L = m->L;
  ptrdiff_t start = go_cap(m, 0), end = go_cap(m, 1);
  if (tr == LUA_TSTRING) {
    size_t lr;
    const char *r = lua_tolstring(L, 3, &lr);
    go_addstring(m, b, r, lr);
    return 1;
  }
  if (tr == LUA_TFUNCTION) {
    int n;
    lua_pushvalue(L, 3);
    n = go_pushcaptures(m, go_values(m));
    lua_call(L, n, 1);
  }
  else {  /* a table: the first capture (or the match) is the key */
    go_pushcapture(m, go_values(m));
    lua_gettable(L, 3);
  }
  if (!lua_toboolean(L, -1)) {  /* nil or false: the match is kept */
    lua_pop(L, 1);
    luaL_addlstring(b, m->src + start, (size_t)(end - start));
    return 0;
  }
  go_addreplacement(L, b);
  return 1;
}


/* gopher-lua's strGsub, each match replaced as it is found (which no script
   can tell from finding them all first: a match runs every instruction, so
   an error while matching comes before the first replacement) */
static int str_gsub (lua_State *L) {
  size_t srcl, lp;
  int isnumber = lua_type(L, 1) == LUA_TNUMBER;
  lua_Number number = lua_tonumber(L, 1);
  const char *src = luaL_checklstring(L, 1, &srcl);
  const char *pat = luaL_checklstring(L, 2, &lp);
  int tr = lua_type(L, 3);
  lua_Integer limit, count = 0;
  ptrdiff_t sp = 0, last = 0;
  int done = 0;
  GoSearch search;
  GoMatch *m = &search.m;
  luaL_Buffer b;
  if (tr != LUA_TSTRING && tr != LUA_TTABLE && tr != LUA_TFUNCTION)
    luaL_argerror(L, 3, lua_pushfstring(L, "string or table or function expected, got %s",
                                        luaL_typename(L, 3)));
  limit = luaL_optinteger(L, 4, -1);
  lua_settop(L, 4);
  go_prepare(L, &search, pat, lp, src, srcl);
  luaL_buffinit(L, &b);
  while (go_find(m, &sp, &count, limit, &done)) {
    luaL_addlstring(&b, src + last, (size_t)(go_cap(m, 0) - last));
    /* kubectl-rollout-lua: gopher-lua's strGsubDoReplace copies the whole
       string for each replacement, so that many in a long string take it
       time that grows with their product: counted as string.rep counts its
       bytes (measured with the oracle: 20,000 replacements in 20,000 bytes
       take it 0.6 s) */
    if (go_addvalue(m, &b, tr))
      lua_librarysteps(L, (int)(srcl / REP_STEP));
    last = go_cap(m, 1);
  }
  if (count == 0) {  /* gopher-lua returns its first argument as it is */
    if (isnumber) lua_pushnumber(L, number);
    else lua_pushvalue(L, 1);
  }
  else {
    luaL_addlstring(&b, src + last, srcl - (size_t)last);
    luaL_pushresult(&b);
  }
  lua_pushinteger(L, count);
  return 2;
}

/* }====================================================== */


/* maximum size of each formatted item (> len(format('%99.99f', -1e308))) */
#define MAX_ITEM	512
/* valid flags in a format specification */
#define FLAGS	"-+ #0"
/*
** maximum size of each format specification (such as '%-099.99d')
** (+10 accounts for %99.99x plus margin of error)
*/
#define MAX_FORMAT	(sizeof(FLAGS) + sizeof(LUA_INTFRMLEN) + 10)


static void addquoted (lua_State *L, luaL_Buffer *b, int arg) {
  size_t l;
  const char *s = luaL_checklstring(L, arg, &l);
  luaL_addchar(b, '"');
  while (l--) {
    switch (*s) {
      case '"': case '\\': case '\n': {
        luaL_addchar(b, '\\');
        luaL_addchar(b, *s);
        break;
      }
      case '\r': {
        luaL_addlstring(b, "\\r", 2);
        break;
      }
      case '\0': {
        luaL_addlstring(b, "\\000", 4);
        break;
      }
      default: {
        luaL_addchar(b, *s);
        break;
      }
    }
    s++;
  }
  luaL_addchar(b, '"');
}

static const char *scanformat (lua_State *L, const char *strfrmt, char *form) {
  const char *p = strfrmt;
  while (*p != '\0' && strchr(FLAGS, *p) != NULL) p++;  /* skip flags */
  if ((size_t)(p - strfrmt) >= sizeof(FLAGS))
    luaL_error(L, "invalid format (repeated flags)");
  if (isdigit(uchar(*p))) p++;  /* skip width */
  if (isdigit(uchar(*p))) p++;  /* (2 digits at most) */
  if (*p == '.') {
    p++;
    if (isdigit(uchar(*p))) p++;  /* skip precision */
    if (isdigit(uchar(*p))) p++;  /* (2 digits at most) */
  }
  if (isdigit(uchar(*p)))
    luaL_error(L, "invalid format (width or precision too long)");
  *(form++) = '%';
  strncpy(form, strfrmt, p - strfrmt + 1);
  form += p - strfrmt + 1;
  *form = '\0';
  return p;
}


static void addintlen (char *form) {
  size_t l = strlen(form);
  char spec = form[l - 1];
  strcpy(form + l - 1, LUA_INTFRMLEN);
  form[l + sizeof(LUA_INTFRMLEN) - 2] = spec;
  form[l + sizeof(LUA_INTFRMLEN) - 1] = '\0';
}


static int str_format (lua_State *L) {
  int top = lua_gettop(L);
  int arg = 1;
  size_t sfl;
  const char *strfrmt = luaL_checklstring(L, arg, &sfl);
  const char *strfrmt_end = strfrmt+sfl;
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  while (strfrmt < strfrmt_end) {
    if (*strfrmt != L_ESC)
      luaL_addchar(&b, *strfrmt++);
    else if (*++strfrmt == L_ESC)
      luaL_addchar(&b, *strfrmt++);  /* %% */
    else { /* format item */
      char form[MAX_FORMAT];  /* to store the format (`%...') */
      char buff[MAX_ITEM];  /* to store the formatted item */
      if (++arg > top)
        luaL_argerror(L, arg, "no value");
      strfrmt = scanformat(L, strfrmt, form);
      switch (*strfrmt++) {
        case 'c': {
          sprintf(buff, form, (int)luaL_checknumber(L, arg));
          break;
        }
        case 'd':  case 'i': {
          addintlen(form);
          sprintf(buff, form, (LUA_INTFRM_T)luaL_checknumber(L, arg));
          break;
        }
        case 'o':  case 'u':  case 'x':  case 'X': {
          addintlen(form);
          sprintf(buff, form, (unsigned LUA_INTFRM_T)luaL_checknumber(L, arg));
          break;
        }
        case 'e':  case 'E': case 'f':
        case 'g': case 'G': {
          sprintf(buff, form, (double)luaL_checknumber(L, arg));
          break;
        }
        case 'q': {
          addquoted(L, &b, arg);
          continue;  /* skip the 'addsize' at the end */
        }
        case 's': {
          size_t l;
          const char *s = luaL_checklstring(L, arg, &l);
          if (!strchr(form, '.') && l >= 100) {
            /* no precision and string is too long to be formatted;
               keep original string */
            lua_pushvalue(L, arg);
            luaL_addvalue(&b);
            continue;  /* skip the `addsize' at the end */
          }
          else {
            sprintf(buff, form, s);
            break;
          }
        }
        default: {  /* also treat cases `pnLlh' */
          return luaL_error(L, "invalid option " LUA_QL("%%%c") " to "
                               LUA_QL("format"), *(strfrmt - 1));
        }
      }
      luaL_addlstring(&b, buff, strlen(buff));
    }
  }
  luaL_pushresult(&b);
  return 1;
}


static const luaL_Reg strlib[] = {
  {"byte", str_byte},
  {"char", str_char},
  {"dump", str_dump},
  {"find", str_find},
  {"format", str_format},
  {"gsub", str_gsub},
  {"len", str_len},
  {"lower", str_lower},
  {"match", str_match},
  {"rep", str_rep},
  {"reverse", str_reverse},
  {"sub", str_sub},
  {"upper", str_upper},
  {NULL, NULL}
};


/*
** kubectl-rollout-lua: as gopher-lua's OpenString, the string library is the
** strings' metatable itself, with an __index field that is itself; gmatch
** (also named gfind) is a closure holding its iterator.
*/
static void createmetatable (lua_State *L) {
  lua_pushvalue(L, -1);
  lua_setfield(L, -2, "__index");
  lua_pushliteral(L, "");  /* dummy string */
  lua_pushvalue(L, -2);
  lua_setmetatable(L, -2);  /* set string metatable */
  lua_pop(L, 1);  /* pop dummy string */
}


/*
** Open string library
*/
LUALIB_API int luaopen_string (lua_State *L) {
  luaL_register(L, LUA_STRLIBNAME, strlib);
  lua_pushcfunction(L, gmatch_aux);  /* kubectl-rollout-lua */
  lua_pushcclosure(L, gmatch, 1);
  lua_pushvalue(L, -1);
  lua_setfield(L, -3, "gmatch");
  lua_setfield(L, -2, "gfind");
  createmetatable(L);
  return 1;
}
