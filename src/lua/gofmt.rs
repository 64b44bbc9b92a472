//! The controller's `string.format`: gopher-lua calls Go's `fmt.Sprintf(format, args...)` with
//! the Lua values themselves as operands, the surplus ones (past the number of `%` in the
//! format, less the `%%`) dropped. So the text is Go's, quirks included: `%!d(MISSING)`,
//! `%!(EXTRA …)`, `%!t(lua.LBool=true)`, widths in runes, `%5.1d` of the string "42" giving
//! "    4", Go's floats and quoting. This is Go's `fmt/print.go` and `fmt/format.go` (Go 1.19)
//! for the values a script can pass, and gopher-lua's `Format` methods (value.go, utils.go's
//! `defaultFormat`, which formats again with a format it rebuilds).
//!
//! Left out, failing instead (`Refused`): a table or function with a verb other than
//! `%s %v %q %x %X %p %T` (or with `%#v`), where Go prints gopher-lua's internal struct,
//! pointers included. Addresses (`%p`, "table: 0x…") are this process's, as the controller's
//! are its own. Numbers convert to integers as on amd64 (see `go_int64`).

use super::gostrconv::{self, can_backquote, format_float, quote};
use super::gounicode::{RUNE_ERROR, decode_rune, is_print, rune_count, runes};

/// An operand: a Lua value as gopher-lua hands it to Go, or a Go value that gopher-lua's
/// `Format` methods format again.
#[derive(Clone, Copy, Debug)]
pub enum Operand<'a> {
    Nil,
    Bool(bool),
    Number(f64),
    String(&'a [u8]),
    /// A table or function and its address.
    Table(usize),
    Function(usize),
    GoInt(i64),
    GoFloat(f64),
    GoString(&'a [u8]),
}

impl Operand<'_> {
    /// Go's `reflect.TypeOf(arg).String()`.
    fn type_name(&self) -> &'static str {
        match self {
            Operand::Nil => "*lua.LNilType",
            Operand::Bool(_) => "lua.LBool",
            Operand::Number(_) => "lua.LNumber",
            Operand::String(_) => "lua.LString",
            Operand::Table(_) => "*lua.LTable",
            Operand::Function(_) => "*lua.LFunction",
            Operand::GoInt(_) => "int64",
            Operand::GoFloat(_) => "float64",
            Operand::GoString(_) => "string",
        }
    }
}

/// Why no text came out.
#[derive(Debug, PartialEq)]
pub enum FormatError {
    /// The text would be longer than the limit.
    TooLarge,
    /// A case this engine does not reproduce (see the module's comment).
    Refused(String),
}

/// gopher-lua's `string.format(format, args...)`: at most `limit` bytes.
pub fn string_format(format: &[u8], args: &[Operand], limit: usize) -> Result<Vec<u8>, FormatError> {
    let percents = format.iter().filter(|&&b| b == b'%').count();
    let doubled = format.windows(2).fold((0, false), |(n, skip), pair| match (skip, pair) {
        (false, b"%%") => (n + 1, true),
        _ => (n, false),
    });
    let patterns = percents - doubled.0;
    let mut printer = Printer::new(limit);
    printer.do_printf(format, &args[..patterns.min(args.len())]);
    match printer.refused {
        Some(refused) => Err(FormatError::Refused(refused)),
        None if printer.too_large => Err(FormatError::TooLarge),
        None => Ok(printer.out),
    }
}

/// Go's `fmtFlags`, with the width and precision.
#[derive(Clone, Copy, Default)]
struct Flags {
    width: Option<usize>,
    precision: Option<usize>,
    minus: bool,
    plus: bool,
    sharp: bool,
    space: bool,
    zero: bool,
    plus_v: bool,
    sharp_v: bool,
}

/// Go's `pp` and `fmt` in one: the text so far and the flags of the verb at hand.
struct Printer {
    out: Vec<u8>,
    /// Past it, nothing more is written, and `too_large` is set.
    limit: usize,
    too_large: bool,
    flags: Flags,
    /// Within a bad verb's `%!x(type=value)`: values are printed without their methods.
    erroring: bool,
    refused: Option<String>,
}

/// Go's `tooLarge`: widths, precisions and argument indexes stop at a million.
fn too_large(n: usize) -> bool {
    n > 1_000_000
}

/// Go's `parsenum`: the number at `start` and the index after it; an overflow consumes the rest
/// of the format.
fn parse_number(format: &[u8], start: usize) -> (Option<usize>, usize) {
    let mut number = 0;
    let mut at = start;
    while let Some(digit) = format.get(at).filter(|b| b.is_ascii_digit()) {
        if too_large(number) {
            return (None, format.len());
        }
        number = number * 10 + usize::from(digit - b'0');
        at += 1;
    }
    ((at > start).then_some(number), at)
}

/// Go's `int64(f)` on amd64 (as the oracle runs, and the controller's usual image), where NaN and
/// values out of range convert to the smallest int64; on arm64 Go saturates them (NaN to 0).
pub fn go_int64(value: f64) -> i64 {
    if (-9_223_372_036_854_775_808.0..9_223_372_036_854_775_808.0).contains(&value) { value as i64 } else { i64::MIN }
}

/// gopher-lua's `isInteger`.
fn is_integer(value: f64) -> bool {
    go_int64(value) as f64 == value
}

/// gopher-lua's `LNumber.String()`, how `tostring`, `..` and `%s` write a number: a whole number
/// an int64 holds as that integer, anything else as Go's `%v` ("0.30000000000000004",
/// "1.2345675e+06", "+Inf", "NaN").
pub fn number_text(out: &mut Vec<u8>, n: f64) {
    if is_integer(n) {
        out.extend_from_slice(go_int64(n).to_string().as_bytes());
    } else {
        format_float(out, n, b'g', -1);
    }
}

impl Printer {
    fn new(limit: usize) -> Printer {
        Printer { out: Vec::new(), limit, too_large: false, flags: Flags::default(), erroring: false, refused: None }
    }

    /// Whether `more` bytes still fit; if not, the text is too large and nothing more is written.
    fn room_for(&mut self, more: usize) -> bool {
        self.too_large |= self.out.len().saturating_add(more) > self.limit;
        !self.too_large
    }

    fn write(&mut self, bytes: &[u8]) {
        if self.room_for(bytes.len()) {
            self.out.extend_from_slice(bytes);
        }
    }

    fn write_rune(&mut self, rune: char) {
        self.write(rune.encode_utf8(&mut [0; 4]).as_bytes());
    }

    /// Go's `doPrintf`.
    fn do_printf(&mut self, format: &[u8], args: &[Operand]) {
        let end = format.len();
        let mut arg = 0;
        let mut reordered = false;
        let mut i = 0;
        while i < end {
            let mut good_arg = true;
            let start = i;
            while i < end && format[i] != b'%' {
                i += 1;
            }
            self.write(&format[start..i]);
            if i >= end {
                break;
            }
            i += 1;
            self.flags = Flags::default();
            while let Some(&c) = format.get(i) {
                match c {
                    b'#' => self.flags.sharp = true,
                    b'0' => self.flags.zero = !self.flags.minus,
                    b'+' => self.flags.plus = true,
                    b'-' => {
                        self.flags.minus = true;
                        self.flags.zero = false;
                    }
                    b' ' => self.flags.space = true,
                    _ => break,
                }
                i += 1;
            }
            // An argument index, `[n]`.
            let mut arg_number = |format: &[u8], i: usize, arg: usize, good_arg: &mut bool| -> (usize, usize, bool) {
                if format.get(i) != Some(&b'[') {
                    return (arg, i, false);
                }
                reordered = true;
                let (index, width, ok) = parse_arg_number(&format[i..]);
                match index {
                    Some(index) if ok && index < args.len() => (index, i + width, true),
                    _ => {
                        *good_arg = false;
                        (arg, i + width, ok)
                    }
                }
            };
            let mut after_index;
            (arg, i, after_index) = arg_number(format, i, arg, &mut good_arg);
            if format.get(i) == Some(&b'*') {
                i += 1;
                let (width, next) = int_from_arg(args, arg);
                arg = next;
                if width.is_none() {
                    self.write(b"%!(BADWIDTH)");
                }
                if width.is_some_and(|w| w < 0) {
                    self.flags.minus = true;
                    self.flags.zero = false;
                }
                self.flags.width = width.map(|w| w.unsigned_abs() as usize);
                after_index = false;
            } else {
                let (width, next) = parse_number(format, i);
                (self.flags.width, i) = (width, next);
                if after_index && width.is_some() {
                    good_arg = false;
                }
            }
            if i + 1 < end && format[i] == b'.' {
                i += 1;
                if after_index {
                    good_arg = false;
                }
                (arg, i, after_index) = arg_number(format, i, arg, &mut good_arg);
                if format.get(i) == Some(&b'*') {
                    i += 1;
                    let (precision, next) = int_from_arg(args, arg);
                    arg = next;
                    // A negative precision is none.
                    self.flags.precision = precision.and_then(|p| usize::try_from(p).ok());
                    if self.flags.precision.is_none() {
                        self.write(b"%!(BADPREC)");
                    }
                    after_index = false;
                } else {
                    let (precision, next) = parse_number(format, i);
                    (self.flags.precision, i) = (Some(precision.unwrap_or(0)), next);
                }
            }
            if !after_index {
                (arg, i, _) = arg_number(format, i, arg, &mut good_arg);
            }
            if i >= end {
                self.write(b"%!(NOVERB)");
                break;
            }
            let (verb, size) = decode_rune(&format[i..]);
            i += size;
            if verb == '%' {
                self.write(b"%");
            } else if !good_arg {
                self.bang(verb, b"(BADINDEX)");
            } else if arg >= args.len() {
                self.bang(verb, b"(MISSING)");
            } else {
                if verb == 'v' {
                    self.flags.sharp_v = std::mem::take(&mut self.flags.sharp);
                    self.flags.plus_v = std::mem::take(&mut self.flags.plus);
                }
                self.print_arg(args[arg], verb);
                arg += 1;
            }
        }
        if !reordered && arg < args.len() {
            self.flags = Flags::default();
            self.write(b"%!(EXTRA ");
            for (n, &extra) in args[arg..].iter().enumerate() {
                if n > 0 {
                    self.write(b", ");
                }
                self.write(extra.type_name().as_bytes());
                self.write(b"=");
                self.print_arg(extra, 'v');
            }
            self.write(b")");
        }
    }

    /// `%!` verb and what went wrong.
    fn bang(&mut self, verb: char, what: &[u8]) {
        self.write(b"%!");
        self.write_rune(verb);
        self.write(what);
    }

    /// Go's `printArg`, with gopher-lua's `Format` and `String` methods.
    fn print_arg(&mut self, arg: Operand, verb: char) {
        match verb {
            'T' => return self.fmt_s(arg.type_name().as_bytes()),
            'p' => return self.fmt_pointer(arg),
            _ => {}
        }
        match arg {
            // Go's own values, and a bad verb's value, are printed without methods.
            Operand::GoInt(_) | Operand::GoFloat(_) | Operand::GoString(_) => self.print_value(arg, verb),
            _ if self.erroring => self.print_value(arg, verb),
            // `%w` is for errors, which no Lua value is.
            _ if verb == 'w' => self.bad_verb(verb, arg),
            Operand::Number(n) => self.format_number(n, verb),
            Operand::String(s) => self.format_string(s, verb),
            _ if !self.flags.sharp_v && matches!(verb, 'v' | 's' | 'x' | 'X' | 'q') => {
                let text = self.stringer_text(arg);
                self.fmt_string(&text, verb, arg);
            }
            _ => self.print_value(arg, verb),
        }
    }

    /// Go's `printValue`: the value by its kind, without its methods.
    fn print_value(&mut self, arg: Operand, verb: char) {
        match arg {
            Operand::GoInt(n) => self.fmt_integer(n as u64, true, verb, arg),
            Operand::Number(f) | Operand::GoFloat(f) => self.fmt_float_verb(f, verb, arg),
            Operand::String(s) | Operand::GoString(s) => self.fmt_string(s, verb, arg),
            Operand::Bool(b) => self.fmt_bool(b, verb, arg),
            // The pointer's struct: `&{}`, or `&lua.LNilType{}` for `%#v`.
            Operand::Nil if self.flags.sharp_v => self.write(b"&lua.LNilType{}"),
            Operand::Nil => self.write(b"&{}"),
            Operand::Table(_) | Operand::Function(_) => {
                let kind = if matches!(arg, Operand::Table(_)) { "a table" } else { "a function" };
                let shown = if self.flags.sharp_v { "%#v".to_string() } else { format!("%{verb}") };
                self.refused.get_or_insert(format!(
                    "{shown} of {kind}: the controller prints its engine's internal Go struct there, which \
                     this engine does not reproduce (use %s, %v or %q)"
                ));
            }
        }
    }

    /// The `String()` of gopher-lua's nil, booleans, tables and functions.
    fn stringer_text(&self, arg: Operand) -> Vec<u8> {
        match arg {
            Operand::Nil => b"nil".to_vec(),
            Operand::Bool(b) => if b { &b"true"[..] } else { b"false" }.to_vec(),
            Operand::Table(address) => format!("table: {address:#x}").into_bytes(),
            Operand::Function(address) => format!("function: {address:#x}").into_bytes(),
            _ => unreachable!("numbers and strings format themselves"),
        }
    }

    /// gopher-lua's `LNumber.Format`.
    fn format_number(&mut self, n: f64, verb: char) {
        match verb {
            'q' | 's' => {
                let mut text = Vec::new();
                number_text(&mut text, n);
                self.default_format(Operand::GoString(&text), verb);
            }
            'b' | 'c' | 'd' | 'o' | 'x' | 'X' | 'U' => self.default_format(Operand::GoInt(go_int64(n)), verb),
            'e' | 'E' | 'f' | 'F' | 'g' | 'G' => self.default_format(Operand::GoFloat(n), verb),
            'i' => self.default_format(Operand::GoInt(go_int64(n)), 'd'),
            _ if is_integer(n) => self.default_format(Operand::GoInt(go_int64(n)), verb),
            _ => self.default_format(Operand::GoFloat(n), verb),
        }
    }

    /// gopher-lua's `LString.Format`: `%d` and `%i` print a string that reads as a number as a
    /// string (`%s`), and any other as the number 0.
    fn format_string(&mut self, s: &[u8], verb: char) {
        match verb {
            'd' | 'i' if gostrconv::parse_number(s).is_some() => self.default_format(Operand::GoString(s), 's'),
            'd' | 'i' => self.default_format(Operand::Number(0.0), 'd'),
            _ => self.default_format(Operand::GoString(s), verb),
        }
    }

    /// gopher-lua's `defaultFormat`: formats `value` again, with a format rebuilt from the
    /// flags, width and precision at hand.
    fn default_format(&mut self, value: Operand, verb: char) {
        let f = self.flags;
        let mut format = String::from("%");
        for (set, flag) in
            [(f.space, ' '), (f.sharp || f.sharp_v, '#'), (f.plus || f.plus_v, '+'), (f.minus, '-'), (f.zero, '0')]
        {
            if set {
                format.push(flag);
            }
        }
        if let Some(width) = f.width {
            format.push_str(&width.to_string());
        }
        if let Some(precision) = f.precision {
            format.push_str(&format!(".{precision}"));
        }
        format.push(verb);
        let mut inner = Printer::new(self.limit.saturating_sub(self.out.len()));
        inner.do_printf(format.as_bytes(), &[value]);
        if let Some(refused) = inner.refused {
            self.refused.get_or_insert(refused);
        }
        self.too_large |= inner.too_large;
        self.write(&inner.out);
    }

    /// Go's `badVerb`: `%!verb(type=value)`.
    fn bad_verb(&mut self, verb: char, arg: Operand) {
        self.erroring = true;
        self.bang(verb, b"(");
        self.write(arg.type_name().as_bytes());
        self.write(b"=");
        self.print_arg(arg, 'v');
        self.write(b")");
        self.erroring = false;
    }

    /// Go's `fmtPointer` for `%p`.
    fn fmt_pointer(&mut self, arg: Operand) {
        static NIL: u8 = 0;
        let address = match arg {
            // gopher-lua's nil is one value, a pointer to an empty struct.
            Operand::Nil => &NIL as *const u8 as usize,
            Operand::Table(address) | Operand::Function(address) => address,
            _ => return self.bad_verb('p', arg),
        };
        self.fmt_0x64(address as u64, !self.flags.sharp);
    }

    fn fmt_0x64(&mut self, value: u64, leading_0x: bool) {
        let sharp = std::mem::replace(&mut self.flags.sharp, leading_0x);
        self.fmt_integer_base(value, 16, false, 'v', LOWER_DIGITS);
        self.flags.sharp = sharp;
    }

    /// Go's `fmtBool`.
    fn fmt_bool(&mut self, value: bool, verb: char, arg: Operand) {
        match verb {
            't' | 'v' => self.pad(if value { b"true" } else { b"false" }),
            _ => self.bad_verb(verb, arg),
        }
    }

    /// Go's `pp.fmtInteger`.
    fn fmt_integer(&mut self, value: u64, signed: bool, verb: char, arg: Operand) {
        match verb {
            'v' | 'd' => self.fmt_integer_base(value, 10, signed, verb, LOWER_DIGITS),
            'b' => self.fmt_integer_base(value, 2, signed, verb, LOWER_DIGITS),
            'o' | 'O' => self.fmt_integer_base(value, 8, signed, verb, LOWER_DIGITS),
            'x' => self.fmt_integer_base(value, 16, signed, verb, LOWER_DIGITS),
            'X' => self.fmt_integer_base(value, 16, signed, verb, UPPER_DIGITS),
            'c' => self.fmt_c(value),
            'U' => self.fmt_unicode(value),
            // `%q` of an integer (Go's quoted rune) is never asked for: gopher-lua quotes a
            // number's text.
            _ => self.bad_verb(verb, arg),
        }
    }

    /// Go's `fmt.fmtInteger`.
    fn fmt_integer_base(&mut self, value: u64, base: u64, signed: bool, verb: char, digits: &[u8; 17]) {
        let negative = signed && (value as i64) < 0;
        let mut value = if negative { value.wrapping_neg() } else { value };
        let f = self.flags;
        let mut precision = 0;
        if let Some(wanted) = f.precision {
            precision = wanted;
            if precision == 0 && value == 0 {
                let zero = std::mem::take(&mut self.flags.zero);
                self.write_padding(f.width.unwrap_or(0));
                self.flags.zero = zero;
                return;
            }
        } else if let Some(width) = f.width.filter(|_| f.zero) {
            precision = width;
            if negative || f.plus || f.space {
                precision = precision.saturating_sub(1);
            }
        }
        if !self.room_for(precision) {
            return;
        }
        // Built backwards, as Go does.
        let mut text = Vec::with_capacity(precision.max(68));
        loop {
            text.push(digits[(value % base) as usize]);
            value /= base;
            if value == 0 {
                break;
            }
        }
        while precision > text.len() {
            text.push(b'0');
        }
        if f.sharp {
            match base {
                2 => text.extend_from_slice(b"b0"),
                8 if text.last() != Some(&b'0') => text.push(b'0'),
                16 => text.extend_from_slice(&[digits[16], b'0']),
                _ => {}
            }
        }
        if verb == 'O' {
            text.extend_from_slice(b"o0");
        }
        if negative {
            text.push(b'-');
        } else if f.plus {
            text.push(b'+');
        } else if f.space {
            text.push(b' ');
        }
        text.reverse();
        let zero = std::mem::take(&mut self.flags.zero);
        self.pad(&text);
        self.flags.zero = zero;
    }

    /// Go's `fmtC`: the rune, or U+FFFD for a value that is none.
    fn fmt_c(&mut self, value: u64) {
        let rune = u32::try_from(value).ok().and_then(char::from_u32).unwrap_or(RUNE_ERROR);
        self.pad(rune.encode_utf8(&mut [0; 4]).as_bytes());
    }

    /// Go's `fmtUnicode`: `U+0041`, with `#` also `'A'` where printable.
    fn fmt_unicode(&mut self, value: u64) {
        let digits = self.flags.precision.filter(|&p| p > 4).unwrap_or(4);
        if !self.room_for(digits) {
            return;
        }
        let mut text = format!("U+{value:0digits$X}").into_bytes();
        let printable = u32::try_from(value).ok().and_then(char::from_u32).filter(|&r| is_print(r));
        if let Some(rune) = printable.filter(|_| self.flags.sharp) {
            text.extend_from_slice(format!(" '{rune}'").as_bytes());
        }
        let zero = std::mem::take(&mut self.flags.zero);
        self.pad(&text);
        self.flags.zero = zero;
    }

    /// Go's `pp.fmtFloat`.
    fn fmt_float_verb(&mut self, value: f64, verb: char, arg: Operand) {
        match verb {
            'v' => self.fmt_float(value, b'g', -1),
            'g' | 'G' => self.fmt_float(value, verb as u8, -1),
            'f' | 'e' | 'E' => self.fmt_float(value, verb as u8, 6),
            'F' => self.fmt_float(value, b'f', 6),
            // `%b`, `%x` and `%X` of a float are never asked for: gopher-lua formats a number
            // as an integer for them.
            _ => self.bad_verb(verb, arg),
        }
    }

    /// Go's `fmt.fmtFloat`.
    fn fmt_float(&mut self, value: f64, verb: u8, default_precision: i64) {
        let f = self.flags;
        let precision = f.precision.map_or(default_precision, |p| p as i64);
        if !self.room_for(precision.max(0) as usize) {
            return;
        }
        let mut num = vec![b'+'];
        format_float(&mut num, value, verb, precision);
        if num[1] == b'-' || num[1] == b'+' {
            num.remove(0);
        }
        if f.space && num[0] == b'+' && !f.plus {
            num[0] = b' ';
        }
        if num[1] == b'I' || num[1] == b'N' {
            let zero = std::mem::take(&mut self.flags.zero);
            if num[1] == b'N' && !f.space && !f.plus {
                num.remove(0);
            }
            self.pad(&num);
            self.flags.zero = zero;
            return;
        }
        if f.sharp {
            let mut digits = match verb {
                b'g' | b'G' if precision == -1 => 6,
                b'g' | b'G' => precision,
                _ => 0,
            };
            let mut tail = Vec::new();
            let mut has_point = false;
            let mut saw_nonzero = false;
            let mut i = 1;
            while i < num.len() {
                match num[i] {
                    b'.' => has_point = true,
                    b'e' | b'E' => {
                        tail = num.split_off(i);
                        break;
                    }
                    digit => {
                        saw_nonzero |= digit != b'0';
                        if saw_nonzero {
                            digits -= 1;
                        }
                    }
                }
                i += 1;
            }
            if !has_point {
                if num.len() == 2 && num[1] == b'0' {
                    digits -= 1;
                }
                num.push(b'.');
            }
            while digits > 0 {
                num.push(b'0');
                digits -= 1;
            }
            num.extend_from_slice(&tail);
        }
        if f.plus || num[0] != b'+' {
            match f.width {
                Some(width) if f.zero && width > num.len() => {
                    self.write(&num[..1]);
                    self.write_padding(width - num.len());
                    self.write(&num[1..]);
                }
                _ => self.pad(&num),
            }
            return;
        }
        self.pad(&num[1..]);
    }

    /// Go's `pp.fmtString`.
    fn fmt_string(&mut self, s: &[u8], verb: char, arg: Operand) {
        match verb {
            'v' if self.flags.sharp_v => self.fmt_q(s),
            'v' | 's' => self.fmt_s(s),
            'x' => self.fmt_sx(s, LOWER_DIGITS),
            'X' => self.fmt_sx(s, UPPER_DIGITS),
            'q' => self.fmt_q(s),
            _ => self.bad_verb(verb, arg),
        }
    }

    /// Go's `truncateString`: at most `precision` runes.
    fn truncate<'s>(&self, s: &'s [u8]) -> &'s [u8] {
        match self.flags.precision {
            Some(precision) => runes(s).nth(precision).map_or(s, |(at, _)| &s[..at]),
            None => s,
        }
    }

    fn fmt_s(&mut self, s: &[u8]) {
        let s = self.truncate(s);
        self.pad(s);
    }

    /// Go's `fmtQ`.
    fn fmt_q(&mut self, s: &[u8]) {
        let s = self.truncate(s);
        let mut quoted = Vec::with_capacity(s.len() + 2);
        if self.flags.sharp && can_backquote(s) {
            quoted.push(b'`');
            quoted.extend_from_slice(s);
            quoted.push(b'`');
        } else {
            quote(&mut quoted, s, self.flags.plus);
        }
        self.pad(&quoted);
    }

    /// Go's `fmtSbx` for a string: its bytes in hex.
    fn fmt_sx(&mut self, s: &[u8], digits: &[u8; 17]) {
        let f = self.flags;
        let length = f.precision.map_or(s.len(), |p| p.min(s.len()));
        let mut width = 2 * length;
        if width == 0 {
            if let Some(padding) = f.width {
                self.write_padding(padding);
            }
            return;
        }
        if f.space {
            if f.sharp {
                width *= 2;
            }
            width += length - 1;
        } else if f.sharp {
            width += 2;
        }
        let padding = f.width.filter(|&w| w > width).map_or(0, |w| w - width);
        if !f.minus {
            self.write_padding(padding);
        }
        let mut hex = Vec::with_capacity(width);
        if f.sharp {
            hex.extend_from_slice(&[b'0', digits[16]]);
        }
        for (i, &byte) in s[..length].iter().enumerate() {
            if f.space && i > 0 {
                hex.push(b' ');
                if f.sharp {
                    hex.extend_from_slice(&[b'0', digits[16]]);
                }
            }
            hex.extend_from_slice(&[digits[usize::from(byte >> 4)], digits[usize::from(byte & 0xF)]]);
        }
        self.write(&hex);
        if f.minus {
            self.write_padding(padding);
        }
    }

    /// Go's `pad`: to the width, counted in runes, on the left unless `-`.
    fn pad(&mut self, text: &[u8]) {
        let Some(width) = self.flags.width.filter(|&w| w > 0) else { return self.write(text) };
        let padding = width.saturating_sub(rune_count(text));
        if self.flags.minus {
            self.write(text);
            self.write_padding(padding);
        } else {
            self.write_padding(padding);
            self.write(text);
        }
    }

    fn write_padding(&mut self, n: usize) {
        if !self.room_for(n) {
            return;
        }
        let byte = if self.flags.zero { b'0' } else { b' ' };
        self.out.resize(self.out.len() + n, byte);
    }
}

const LOWER_DIGITS: &[u8; 17] = b"0123456789abcdefx";
const UPPER_DIGITS: &[u8; 17] = b"0123456789ABCDEFX";

/// Go's `parseArgNumber` on the text from `[`: the zero-based index, the bytes it takes, and
/// whether it is well formed.
fn parse_arg_number(format: &[u8]) -> (Option<usize>, usize, bool) {
    if format.len() < 3 {
        return (None, 1, false);
    }
    let Some(close) = format.iter().position(|&b| b == b']') else { return (None, 1, false) };
    match parse_number(&format[..close], 1) {
        (Some(number), at) if at == close => (number.checked_sub(1), close + 1, true),
        _ => (None, close + 1, false),
    }
}

/// Go's `intFromArg` for `*`: the operand as a width or precision where it is a Go integer (a
/// rebuilt format can ask for one), else `None`, and the next operand. To Go a Lua number is a
/// float64: `*` with one gives `%!(BADWIDTH)`, taking it.
fn int_from_arg(args: &[Operand], arg: usize) -> (Option<i64>, usize) {
    match args.get(arg) {
        Some(Operand::GoInt(n)) if n.unsigned_abs() <= 1_000_000 => (Some(*n), arg + 1),
        Some(_) => (None, arg + 1),
        None => (None, arg),
    }
}

#[cfg(test)]
mod tests {
    use super::Operand::*;
    use super::*;

    fn check(format: &str, args: &[Operand], want: &str) {
        let got = string_format(format.as_bytes(), args, usize::MAX).unwrap();
        assert_eq!(std::string::String::from_utf8_lossy(&got), want, "{format:?} {args:?}");
    }

    // The expected texts are what the controller's engine (the oracle) gives.

    #[test]
    fn missing_surplus_and_malformed_verbs_are_gos() {
        check("%s %s", &[Number(1.0)], "1 %!s(MISSING)");
        check("%d", &[], "%!d(MISSING)");
        check("%d %s", &[Number(1.0), Number(2.0), Number(3.0), Nil], "1 2");
        check("%s", &[Number(1.0), String(b"x")], "1");
        check("%", &[Number(1.0)], "%!(NOVERB)%!(EXTRA lua.LNumber=1)");
        check("abc%", &[], "abc%!(NOVERB)");
        check("%5%|", &[Number(1.0)], "%|%!(EXTRA lua.LNumber=1)");
        check("%-", &[Number(2.0)], "%!(NOVERB)%!(EXTRA lua.LNumber=2)");
        check("%z", &[Number(1.5)], "%!z(float64=1.5)");
        check("%z", &[String(b"s")], "%!z(string=s)");
        check("%!", &[Nil], "&{}");
        check("%é", &[Bool(true)], "%!é(lua.LBool=true)");
        check("%%d", &[Number(1.0)], "%d%!(EXTRA lua.LNumber=1)");
        check("%%%d", &[Number(1.0)], "%1");
    }

    #[test]
    fn argument_indexes_are_gos() {
        check("%[2]s %[1]s", &[String(b"a"), String(b"b")], "b a");
        check("%[2]s", &[String(b"a")], "%!s(BADINDEX)");
        check("%[0]d", &[Number(1.0)], "%!d(BADINDEX)");
        check("%[3]d", &[Number(1.0), Number(2.0)], "%!d(BADINDEX)");
        check("%[x]d", &[Number(1.0)], "%!d(BADINDEX)");
        check("%[1]5d", &[Number(1.0)], "%!d(BADINDEX)");
        check("%[1]", &[Number(1.0)], "%!(NOVERB)");
        check("%[2]d %d", &[Number(1.0), Number(2.0), Number(3.0)], "2 %!d(MISSING)");
    }

    #[test]
    fn a_star_takes_an_operand_and_is_a_bad_width() {
        check("%*d", &[Number(5.0), Number(1.0)], "%!(BADWIDTH)%!d(MISSING)");
        check("%.*f", &[Number(2.0), Number(1.5)], "%!(BADPREC)%!f(MISSING)");
        check("%*d", &[], "%!(BADWIDTH)%!d(MISSING)");
        check("%.5*", &[Number(1.0)], "%!*(int64=00001)");
        check("%**", &[Number(1.0), Number(1000000.0)], "%!(BADWIDTH)%!*(MISSING)");
    }

    #[test]
    fn nil_booleans_and_tables_are_stringers() {
        check("%s %v %q %x %X", &[Nil, Nil, Nil, Nil, Nil], "nil nil \"nil\" 6e696c 6E696C");
        check("%s|%5v|%-6q|%.2s", &[Bool(true), Bool(false), Bool(true), Bool(false)], "true|false|\"true\"|fa");
        check("%d %t %c", &[Bool(true), Bool(true), Bool(false)], "%!d(lua.LBool=true) true %!c(lua.LBool=false)");
        check("%d|%5d|%#v|%T", &[Nil, Nil, Nil, Nil], "&{}|&{}|&lua.LNilType{}|*lua.LNilType");
        check("%#v %T %p", &[Bool(true), Bool(true), Bool(true)], "true lua.LBool %!p(lua.LBool=true)");
        check("%w", &[Nil], "%!w(*lua.LNilType=&{})");
        check("%w %w", &[Bool(true), String(b"s")], "%!w(lua.LBool=true) %!w(lua.LString=s)");
    }

    #[test]
    fn numbers_format_as_go_int64_or_float64() {
        check(
            "%d %i %5d %-5d| %05d %+d % d",
            &[Number(42.0), Number(42.0), Number(-3.0), Number(-3.0), Number(-3.0), Number(5.0), Number(5.0)],
            "42 42    -3 -3   | -0003 +5  5",
        );
        check("%d %i", &[Number(2.5), Number(-2.5)], "2 -2");
        check(
            "%x %X %o %O %b %#x %#o %#b",
            &[
                Number(255.0),
                Number(255.0),
                Number(8.0),
                Number(8.0),
                Number(5.0),
                Number(255.0),
                Number(8.0),
                Number(5.0),
            ],
            "ff FF 10 0o10 101 0xff 010 0b101",
        );
        check("%x %d", &[Number(-255.0), Number(9.223372036854776e+18)], "-ff -9223372036854775808");
        check("%d %d", &[Number(-9.223372036854776e+18), Number(1e+300)], "-9223372036854775808 -9223372036854775808");
        check("%u %t %z", &[Number(42.0), Number(1.5), Number(7.0)], "%!u(int64=42) %!t(float64=1.5) %!z(int64=7)");
        check(
            "%v %v %v %v %s %q",
            &[Number(1.0), Number(1.5), Number(1e+20), Number(123456789.0), Number(1e+21), Number(0.1)],
            "1 1.5 1e+20 123456789 1e+21 \"0.1\"",
        );
        check(
            "%e %E %f %F %g %G",
            &[Number(12345.678), Number(12345.678), Number(12345.678), Number(1e-07), Number(1e-07), Number(1e+100)],
            "1.234568e+04 1.234568E+04 12345.678000 0.000000 1e-07 1E+100",
        );
        check(
            "%.2f %.0f %.3e %.10g %.3g %#g %#.3x",
            &[Number(1.005), Number(2.5), Number(0.0), Number(1.5), Number(100.0), Number(1.0), Number(1.5)],
            "1.00 2 0.000e+00 1.5 100 1.00000 0x001",
        );
        check(
            "%08.3f|%-8.2f|%+.1e|% f|%+08d",
            &[Number(-3.14259), Number(2.5), Number(12345.0), Number(1.0), Number(-7.0)],
            "-003.143|2.50    |+1.2e+04| 1.000000|-0000007",
        );
        check(
            "%f %v %5.1f %e",
            &[Number(f64::INFINITY), Number(f64::NEG_INFINITY), Number(f64::INFINITY), Number(f64::NAN)],
            "+Inf -Inf  +Inf NaN",
        );
        check("%v %s %d", &[Number(f64::NAN), Number(-0.0), Number(-0.0)], "NaN 0 0");
        check(
            "%#v %+v %T %p",
            &[Number(1.0), Number(5.0), Number(1.0), Number(1.0)],
            "1 5 lua.LNumber %!p(lua.LNumber=1)",
        );
        check("%c%c%c%c", &[Number(19990.0), Number(65.0), Number(1114112.0), Number(-1.0)], "世A\u{fffd}\u{fffd}");
        check(
            "%U %#U %#U %.6U %#U",
            &[Number(128512.0), Number(128512.0), Number(10.0), Number(65.0), Number(55296.0)],
            "U+1F600 U+1F600 '😀' U+000A U+000041 U+D800",
        );
        check("%s %q %10.3s|", &[Number(1.5), Number(3.0), Number(1234.5)], "1.5 \"3\"        123|");
    }

    #[test]
    fn strings_format_as_go_strings_with_gopher_luas_d_quirk() {
        check("%d %d %d %i", &[String(b"42"), String(b"x"), String(b" 0x1f "), String(b"1e3")], "42 0  0x1f  1e3");
        check("%5.1d|%05d|%+d", &[String(b"42"), String(b"x"), String(b"inf")], "    4|00000|inf");
        check(
            "%.2f %e %g",
            &[String(b"3"), String(b"1.5"), String(b"x")],
            "%!f(string=3) %!e(string=1.5) %!g(string=x)",
        );
        check(
            "%10s|%-10s|%.2s|%.0s|",
            &[
                String(b"\xc3\xa9"),
                String(b"\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e"),
                String(b"\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e"),
                String(b"x"),
            ],
            "         é|日本語       |日本||",
        );
        check(
            "%x %X % x %#x %# X %.1x %8x|%-8x|",
            &[
                String(b"hi"),
                String(b"hi"),
                String(b"hi"),
                String(b"hi"),
                String(b"hi"),
                String(b"hi"),
                String(b"hi"),
                String(b"hi"),
            ],
            "6869 6869 68 69 0x6869 0X68 0X69 68     6869|6869    |",
        );
        check("%x|%5x|", &[String(b""), String(b"")], "|     |");
        check(
            "%q %+q %#q %#q %#+q",
            &[
                String(b"a\x0a\"\xc3\xa9"),
                String(b"\xc3\xa9\xf0\x9f\x98\x80"),
                String(b"x`"),
                String(b"tab\x09ok"),
                String(b"\xef\xbb\xbf"),
            ],
            "\"a\\n\\\"é\" \"\\u00e9\\U0001f600\" \"x`\" `tab\x09ok` \"\\ufeff\"",
        );
        check("%q", &[String(b"\x00\x07\x7f\xff\xe2\x80\x8b")], "\"\\x00\\a\\x7f\\xff\\u200b\"");
        check(
            "%v %#v %T %p %t %c",
            &[String(b"s"), String(b"s"), String(b"s"), String(b"s"), String(b"s"), String(b"s")],
            "s \"s\" lua.LString %!p(lua.LString=s) %!t(string=s) %!c(string=s)",
        );
        check("%010s|%-010s|", &[String(b"ab"), String(b"ab")], "00000000ab|ab        |");
    }

    #[test]
    fn widths_count_runes_and_invalid_bytes_are_one_each() {
        let got = string_format(b"%5s|%-4s|", &[String(b"\xff\xfe"), String(b"\xe2\x82")], usize::MAX).unwrap();
        assert_eq!(got, b"   \xff\xfe|\xe2\x82  |");
    }

    #[test]
    fn tables_and_functions_print_their_address_or_are_refused() {
        check(
            "%s|%v|%T|%T",
            &[Table(0xc0ffee), Function(0xbeef), Table(1), Function(1)],
            "table: 0xc0ffee|function: 0xbeef|*lua.LTable|*lua.LFunction",
        );
        check("%p %x", &[Table(0xc0ffee), Table(0xab)], "0xc0ffee 7461626c653a2030786162");
        for (format, operand) in [("%d", Table(1)), ("%#v", Table(1)), ("%t", Function(1)), ("%w", Function(1))] {
            let Err(FormatError::Refused(message)) = string_format(format.as_bytes(), &[operand], usize::MAX) else {
                panic!("{format} {operand:?} is refused")
            };
            assert!(message.contains("internal Go struct"), "{message}");
        }
    }

    #[test]
    fn a_text_past_the_limit_is_refused_before_it_is_built() {
        // Go's widths and precisions stop at about a million: a larger one ends the format.
        check("%999999999d", &[Number(1.0)], "%!(NOVERB)%!(EXTRA lua.LNumber=1)");
        assert_eq!(string_format(b"%9999999d", &[Number(1.0)], 10_000_000).map(|t| t.len()), Ok(9_999_999));
        for (format, operand) in [
            ("%9999999d", Number(1.0)),
            ("%.9999999f", Number(1.0)),
            ("%.9999999d", Number(1.0)),
            ("%.9999999U", Number(1.0)),
            ("%9999999s", String(b"x")),
            ("%09999999.1f", Number(1.0)),
            ("%[1]s%[1]s%[1]s", String(b"abcd")),
        ] {
            assert_eq!(string_format(format.as_bytes(), &[operand], 10), Err(FormatError::TooLarge), "{format}");
        }
    }
}
