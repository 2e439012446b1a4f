//! JSON for the fixed shapes of agenthost/1: the request envelope, the
//! tools' flat argument objects, and the result. Written by hand so that the
//! guest stays small: a generic decoder would cost more code than the few
//! shapes it has to read.

/// A scalar value of an argument object, or the kind of a compound one.
pub enum Value {
    Null,
    Bool(bool),
    /// The number as written (valid JSON number syntax).
    Num(Vec<u8>),
    Str(String),
    Array,
    Object,
}

impl Value {
    /// The value's kind with its article, for messages.
    pub fn kind(&self) -> &'static str {
        match self {
            Value::Null => "null",
            Value::Bool(_) => "a boolean",
            Value::Num(_) => "a number",
            Value::Str(_) => "a string",
            Value::Array => "an array",
            Value::Object => "an object",
        }
    }
}

/// Nesting deeper than this is refused: no argument of core nests at all,
/// and the check keeps a hostile request from costing more than its size.
const MAX_DEPTH: usize = 10000;

struct Scan<'a> {
    b: &'a [u8],
    i: usize,
}

fn is_space(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\n' | b'\r')
}

/// Trims JSON white space from both ends of b.
pub fn trim(mut b: &[u8]) -> &[u8] {
    while let [c, rest @ ..] = b {
        if !is_space(*c) {
            break;
        }
        b = rest;
    }
    while let [rest @ .., c] = b {
        if !is_space(*c) {
            break;
        }
        b = rest;
    }
    b
}

impl<'a> Scan<'a> {
    fn ws(&mut self) {
        while self.i < self.b.len() && is_space(self.b[self.i]) {
            self.i += 1;
        }
    }

    fn peek(&mut self) -> Option<u8> {
        self.ws();
        self.b.get(self.i).copied()
    }

    /// The error for the byte at the cursor (or the end of the input).
    fn unexpected(&self, what: &str) -> String {
        match self.b.get(self.i) {
            None => "unexpected end of JSON input".to_string(),
            Some(&c) => {
                let shown = if (0x20..0x7f).contains(&c) && c != b'\'' {
                    format!("'{}'", c as char)
                } else {
                    format!("byte 0x{:02x}", c)
                };
                format!("invalid character {} {} (at byte {})", shown, what, self.i)
            }
        }
    }

    fn expect(&mut self, c: u8, what: &str) -> Result<(), String> {
        if self.peek() == Some(c) {
            self.i += 1;
            Ok(())
        } else {
            Err(self.unexpected(what))
        }
    }

    /// Reads a string at the cursor (after white space). Invalid UTF-8 in
    /// it becomes U+FFFD, one for each byte that does not start a valid
    /// sequence, as Go's encoding/json decodes it; a \u escape of half a
    /// surrogate pair does too.
    fn string(&mut self) -> Result<String, String> {
        if self.peek() != Some(b'"') {
            return Err(self.unexpected("looking for the beginning of a string"));
        }
        self.i += 1;
        let mut out: Vec<u8> = Vec::new();
        let mut start = self.i;
        loop {
            let c = match self.b.get(self.i) {
                None => return Err("unexpected end of JSON input".to_string()),
                Some(&c) => c,
            };
            match c {
                b'"' => {
                    out.extend_from_slice(&self.b[start..self.i]);
                    self.i += 1;
                    return Ok(into_string(out));
                }
                b'\\' => {
                    out.extend_from_slice(&self.b[start..self.i]);
                    self.i += 1;
                    let e = match self.b.get(self.i) {
                        None => return Err("unexpected end of JSON input".to_string()),
                        Some(&e) => e,
                    };
                    self.i += 1;
                    match e {
                        b'"' | b'\\' | b'/' => out.push(e),
                        b'b' => out.push(8),
                        b'f' => out.push(12),
                        b'n' => out.push(b'\n'),
                        b'r' => out.push(b'\r'),
                        b't' => out.push(b'\t'),
                        b'u' => {
                            let mut r = self.hex4()?;
                            if (0xd800..0xdc00).contains(&r)
                                && self.b.get(self.i) == Some(&b'\\')
                                && self.b.get(self.i + 1) == Some(&b'u')
                            {
                                let save = self.i;
                                self.i += 2;
                                let lo = self.hex4()?;
                                if (0xdc00..0xe000).contains(&lo) {
                                    r = 0x10000 + ((r - 0xd800) << 10) + (lo - 0xdc00);
                                } else {
                                    self.i = save; // read on its own next
                                }
                            }
                            let ch = char::from_u32(r).unwrap_or('\u{fffd}');
                            let mut buf = [0u8; 4];
                            out.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
                        }
                        _ => {
                            self.i -= 1;
                            return Err(self.unexpected("in string escape code"));
                        }
                    }
                    start = self.i;
                }
                c if c < 0x20 => return Err(self.unexpected("in string literal")),
                _ => self.i += 1,
            }
        }
    }

    fn hex4(&mut self) -> Result<u32, String> {
        let mut r = 0u32;
        for _ in 0..4 {
            let d = match self.b.get(self.i) {
                None => return Err("unexpected end of JSON input".to_string()),
                Some(&c) => match c {
                    b'0'..=b'9' => c - b'0',
                    b'a'..=b'f' => c - b'a' + 10,
                    b'A'..=b'F' => c - b'A' + 10,
                    _ => return Err(self.unexpected("in \\u hexadecimal character escape")),
                },
            };
            r = r * 16 + d as u32;
            self.i += 1;
        }
        Ok(r)
    }

    /// Reads a number by JSON's grammar and returns its text.
    fn number(&mut self) -> Result<&'a [u8], String> {
        self.ws();
        let start = self.i;
        let b = self.b;
        let digits = |i: &mut usize| {
            let s = *i;
            while *i < b.len() && b[*i].is_ascii_digit() {
                *i += 1;
            }
            *i > s
        };
        let mut i = self.i;
        if b.get(i) == Some(&b'-') {
            i += 1;
        }
        match b.get(i) {
            Some(b'0') => i += 1,
            Some(b'1'..=b'9') => {
                digits(&mut i);
            }
            _ => {
                self.i = i;
                return Err(self.unexpected("in numeric literal"));
            }
        }
        if b.get(i) == Some(&b'.') {
            i += 1;
            if !digits(&mut i) {
                self.i = i;
                return Err(self.unexpected("after decimal point in numeric literal"));
            }
        }
        if matches!(b.get(i), Some(b'e') | Some(b'E')) {
            i += 1;
            if matches!(b.get(i), Some(b'+') | Some(b'-')) {
                i += 1;
            }
            if !digits(&mut i) {
                self.i = i;
                return Err(self.unexpected("in exponent of numeric literal"));
            }
        }
        self.i = i;
        Ok(&b[start..i])
    }

    fn literal(&mut self, word: &[u8]) -> Result<(), String> {
        for &w in word {
            if self.b.get(self.i) != Some(&w) {
                return Err(self.unexpected("in literal"));
            }
            self.i += 1;
        }
        Ok(())
    }

    /// Reads one value: scalars are returned, arrays and objects are
    /// checked and skipped (without recursion: a stack of what closes
    /// them).
    fn value(&mut self) -> Result<Value, String> {
        match self.peek() {
            Some(b'"') => return self.string().map(Value::Str),
            Some(b't') => return self.literal(b"true").map(|_| Value::Bool(true)),
            Some(b'f') => return self.literal(b"false").map(|_| Value::Bool(false)),
            Some(b'n') => return self.literal(b"null").map(|_| Value::Null),
            Some(b'-') | Some(b'0'..=b'9') => return self.number().map(|n| Value::Num(n.to_vec())),
            Some(b'{') | Some(b'[') => {}
            _ => return Err(self.unexpected("looking for the beginning of a value")),
        }
        let kind = if self.b[self.i] == b'{' { Value::Object } else { Value::Array };
        let mut stack: Vec<u8> = Vec::new();
        loop {
            // At the start of a value.
            match self.peek() {
                Some(b'{') => {
                    self.i += 1;
                    stack.push(b'}');
                    if stack.len() > MAX_DEPTH {
                        return Err(format!("nested deeper than {} levels", MAX_DEPTH));
                    }
                    if self.peek() == Some(b'}') {
                        self.i += 1;
                        stack.pop();
                    } else {
                        self.string()?;
                        self.expect(b':', "after object key")?;
                        continue;
                    }
                }
                Some(b'[') => {
                    self.i += 1;
                    stack.push(b']');
                    if stack.len() > MAX_DEPTH {
                        return Err(format!("nested deeper than {} levels", MAX_DEPTH));
                    }
                    if self.peek() == Some(b']') {
                        self.i += 1;
                        stack.pop();
                    } else {
                        continue;
                    }
                }
                Some(b'"') => {
                    self.string()?;
                }
                Some(b't') => self.literal(b"true")?,
                Some(b'f') => self.literal(b"false")?,
                Some(b'n') => self.literal(b"null")?,
                Some(b'-') | Some(b'0'..=b'9') => {
                    self.number()?;
                }
                _ => return Err(self.unexpected("looking for the beginning of a value")),
            }
            // After a value: close what ends here, or go on to the next.
            loop {
                let close = match stack.last() {
                    None => return Ok(kind),
                    Some(&c) => c,
                };
                match self.peek() {
                    Some(c) if c == close => {
                        self.i += 1;
                        stack.pop();
                    }
                    Some(b',') => {
                        self.i += 1;
                        if close == b'}' {
                            self.string()?;
                            self.expect(b':', "after object key")?;
                        }
                        break;
                    }
                    _ => {
                        let what = if close == b'}' {
                            "after object key:value pair"
                        } else {
                            "after array element"
                        };
                        return Err(self.unexpected(what));
                    }
                }
            }
        }
    }

    /// Checks that only white space is left.
    fn end(&mut self) -> Result<(), String> {
        if self.peek().is_some() {
            return Err(self.unexpected("after top-level value"));
        }
        Ok(())
    }
}

/// Makes a String of bytes that may hold invalid UTF-8, replacing each byte
/// that does not start a valid sequence with U+FFFD (Go's rule).
pub fn into_string(b: Vec<u8>) -> String {
    match String::from_utf8(b) {
        Ok(s) => s,
        Err(e) => {
            let b = e.into_bytes();
            let mut s = String::with_capacity(b.len() + 8);
            for_utf8_runs(&b, |run| match run {
                Ok(valid) => s.push_str(valid),
                Err(n) => {
                    for _ in 0..n {
                        s.push('\u{fffd}');
                    }
                }
            });
            s
        }
    }
}

/// Calls f with the valid UTF-8 runs of b (Ok) and the lengths of the
/// invalid sequences between them (Err). An invalid sequence is the lead
/// byte and continuation bytes of an incomplete character: in Go's reading
/// each of its bytes is one U+FFFD.
pub fn for_utf8_runs(mut b: &[u8], mut f: impl FnMut(Result<&str, usize>)) {
    while !b.is_empty() {
        match std::str::from_utf8(b) {
            Ok(s) => {
                f(Ok(s));
                return;
            }
            Err(e) => {
                let n = e.valid_up_to();
                if n > 0 {
                    // from_utf8 said the prefix is valid UTF-8.
                    f(Ok(std::str::from_utf8(&b[..n]).unwrap_or("")));
                }
                let bad = e.error_len().unwrap_or(b.len() - n);
                f(Err(bad));
                b = &b[n + bad..];
            }
        }
    }
}

/// The call-mode request envelope.
pub struct Request<'a> {
    pub tool: String,
    /// The JSON text of the arguments value, empty when absent.
    pub arguments: &'a [u8],
}

/// Reads a request: an object with "tool" and "call_id" strings (or null)
/// and "arguments" of any JSON kind. Other members are ignored.
pub fn parse_request(data: &[u8]) -> Result<Request<'_>, String> {
    let mut s = Scan { b: data, i: 0 };
    let mut req = Request { tool: String::new(), arguments: &[] };
    if s.peek() != Some(b'{') {
        if s.peek().is_none() {
            return Err("unexpected end of JSON input".to_string());
        }
        let start = s.i;
        let v = s.value()?;
        s.i = start;
        return Err(format!("want an object, got {}", v.kind()));
    }
    s.i += 1;
    if s.peek() == Some(b'}') {
        s.i += 1;
    } else {
        loop {
            let key = s.string()?;
            s.expect(b':', "after object key")?;
            match key.as_str() {
                "arguments" => {
                    s.ws();
                    let start = s.i;
                    s.value()?;
                    req.arguments = &data[start..s.i];
                }
                "tool" | "call_id" => match s.value()? {
                    Value::Str(v) => {
                        if key == "tool" {
                            req.tool = v;
                        }
                    }
                    Value::Null => {}
                    v => return Err(format!("\"{}\" must be a string, not {}", key, v.kind())),
                },
                _ => {
                    s.value()?;
                }
            }
            match s.peek() {
                Some(b',') => s.i += 1,
                Some(b'}') => {
                    s.i += 1;
                    break;
                }
                _ => return Err(s.unexpected("after object key:value pair")),
            }
        }
    }
    s.end()?;
    Ok(req)
}

/// The members of an argument object, in order.
pub type Members = Vec<(String, Value)>;

/// Reads a tool's arguments: absent or null (no arguments), an object, or a
/// JSON string holding one (as some models send them). The error is the
/// whole message after "TOOL: ".
pub fn parse_args(raw: &[u8]) -> Result<Members, String> {
    let raw = trim(raw);
    if raw.is_empty() || raw == b"null" {
        return Ok(Vec::new());
    }
    if raw[0] == b'"' {
        let mut s = Scan { b: raw, i: 0 };
        let inner = s
            .string()
            .and_then(|v| s.end().map(|_| v))
            .map_err(|e| format!("arguments are not valid JSON: {}", e))?;
        let inner = trim(inner.as_bytes());
        if inner == b"null" {
            return Ok(Vec::new());
        }
        return object(inner).map_err(|e| format!("invalid arguments: {}", e));
    }
    object(raw).map_err(|e| format!("invalid arguments: {}", e))
}

fn object(raw: &[u8]) -> Result<Members, String> {
    // Check the whole text first, so a syntax error is the one reported.
    let mut s = Scan { b: raw, i: 0 };
    let kind = s.value()?;
    if s.peek().is_some() {
        return Err("more than one JSON value".to_string());
    }
    if !matches!(kind, Value::Object) {
        return Err(format!("want a JSON object, got {}", kind.kind()));
    }
    let mut s = Scan { b: raw, i: 0 };
    s.expect(b'{', "")?;
    let mut members = Vec::new();
    if s.peek() == Some(b'}') {
        return Ok(members);
    }
    loop {
        let key = s.string()?;
        s.expect(b':', "after object key")?;
        let v = s.value()?;
        members.push((key, v));
        match s.peek() {
            Some(b',') => s.i += 1,
            _ => return Ok(members),
        }
    }
}

/// The arguments of one tool, read member by member: each accessor takes
/// its field, and finish reports the first member no accessor took.
pub struct Args {
    members: Members,
    taken: Vec<bool>,
    err: Option<String>,
}

impl Args {
    pub fn new(members: Members) -> Args {
        let n = members.len();
        Args { members, taken: vec![false; n], err: None }
    }

    /// The last member named name (a repeated key: the last one counts),
    /// marking every member of that name as known.
    fn take(&mut self, name: &str) -> Option<usize> {
        let mut last = None;
        for (i, (k, _)) in self.members.iter().enumerate() {
            if k == name {
                self.taken[i] = true;
                last = Some(i);
            }
        }
        last
    }

    fn fail(&mut self, name: &str, want: &str, v: &Value) {
        if self.err.is_none() {
            self.err = Some(format!("\"{}\" must be {}, not {}", name, want, v.kind()));
        }
    }

    /// A string field; None when absent or null.
    pub fn string(&mut self, name: &str) -> Option<String> {
        let i = self.take(name)?;
        match &mut self.members[i].1 {
            Value::Str(s) => Some(std::mem::take(s)),
            Value::Null => None,
            _ => {
                let v = std::mem::replace(&mut self.members[i].1, Value::Null);
                self.fail(name, "a string", &v);
                None
            }
        }
    }

    /// A boolean field; false when absent or null.
    pub fn boolean(&mut self, name: &str) -> bool {
        let i = match self.take(name) {
            None => return false,
            Some(i) => i,
        };
        match self.members[i].1 {
            Value::Bool(b) => b,
            Value::Null => false,
            _ => {
                let v = std::mem::replace(&mut self.members[i].1, Value::Null);
                self.fail(name, "a boolean", &v);
                false
            }
        }
    }

    /// An integer field; 0 when absent or null. A number with a fraction
    /// or exponent is accepted when its value is a whole number (JSON
    /// Schema's "integer" allows 1.0).
    pub fn integer(&mut self, name: &str) -> i64 {
        let i = match self.take(name) {
            None => return 0,
            Some(i) => i,
        };
        let text = match &self.members[i].1 {
            Value::Num(t) => t.clone(),
            Value::Null => return 0,
            _ => {
                let v = std::mem::replace(&mut self.members[i].1, Value::Null);
                self.fail(name, "an integer", &v);
                return 0;
            }
        };
        let s = std::str::from_utf8(&text).unwrap_or("");
        if let Ok(n) = s.parse::<i64>() {
            return n;
        }
        let f: f64 = s.parse().unwrap_or(f64::NAN);
        if f.fract() == 0.0 && f.abs() < 9.2e18 {
            return f as i64;
        }
        if self.err.is_none() {
            self.err = Some(if f.is_infinite() || f.fract() == 0.0 {
                format!("\"{}\" is out of range: {}", name, s)
            } else {
                format!("\"{}\" must be an integer, not {}", name, s)
            });
        }
        0
    }

    /// The first error: a field of the wrong type, else an unknown field.
    pub fn finish(self) -> Result<(), String> {
        if let Some(e) = self.err {
            return Err(format!("invalid arguments: {}", e));
        }
        for (i, (k, _)) in self.members.iter().enumerate() {
            if !self.taken[i] {
                return Err(format!("invalid arguments: unknown field {}", quote_go(k.as_bytes())));
            }
        }
        Ok(())
    }
}

const HEX: &[u8; 16] = b"0123456789abcdef";

/// Appends s as a JSON string the way Go's encoding/json writes it without
/// HTML escaping: invalid UTF-8 becomes \ufffd (one per byte that does not
/// start a valid sequence), U+2028 and U+2029 are escaped.
pub fn append_string(out: &mut Vec<u8>, s: &[u8]) {
    out.reserve(s.len() + 2);
    out.push(b'"');
    for_utf8_runs(s, |run| match run {
        Ok(valid) => append_valid(out, valid),
        Err(n) => {
            for _ in 0..n {
                out.extend_from_slice(b"\\ufffd");
            }
        }
    });
    out.push(b'"');
}

fn append_valid(out: &mut Vec<u8>, s: &str) {
    let b = s.as_bytes();
    let mut start = 0;
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        let esc: &[u8] = match c {
            b'"' => b"\\\"",
            b'\\' => b"\\\\",
            b'\n' => b"\\n",
            b'\r' => b"\\r",
            b'\t' => b"\\t",
            8 => b"\\b",
            12 => b"\\f",
            0..=0x1f => b"",
            // U+2028 and U+2029: E2 80 A8 / E2 80 A9.
            0xe2 if b.get(i + 1) == Some(&0x80) && matches!(b.get(i + 2), Some(0xa8) | Some(0xa9)) => b"",
            _ => {
                i += 1;
                continue;
            }
        };
        out.extend_from_slice(&b[start..i]);
        if !esc.is_empty() {
            out.extend_from_slice(esc);
            i += 1;
        } else if c == 0xe2 {
            out.extend_from_slice(if b[i + 2] == 0xa8 { b"\\u2028" } else { b"\\u2029" });
            i += 3;
        } else {
            out.extend_from_slice(&[b'\\', b'u', b'0', b'0', HEX[(c >> 4) as usize], HEX[(c & 15) as usize]]);
            i += 1;
        }
        start = i;
    }
    out.extend_from_slice(&b[start..]);
}

/// Appends the result document, final newline included, as Go's
/// encoding/json Encoder with SetEscapeHTML(false) writes it.
pub fn append_result(out: &mut Vec<u8>, text: &[u8], is_error: bool) {
    out.extend_from_slice(b"{\"content\":[{\"type\":\"text\",\"text\":");
    append_string(out, text);
    if is_error {
        out.extend_from_slice(b"}],\"is_error\":true}\n");
    } else {
        out.extend_from_slice(b"}],\"is_error\":false}\n");
    }
}

/// s as a JSON string with <, > and & escaped too (Go's json.Marshal), for
/// the messages that quote what the host sent.
pub fn quote_json(s: &[u8]) -> String {
    let mut b = Vec::new();
    append_string(&mut b, s);
    let mut out = String::with_capacity(b.len());
    for ch in into_string(b).chars() {
        match ch {
            '<' => out.push_str("\\u003c"),
            '>' => out.push_str("\\u003e"),
            '&' => out.push_str("\\u0026"),
            c => out.push(c),
        }
    }
    out
}

/// s as a double-quoted Go string literal (Go's strconv.Quote): printable
/// characters as they are, others escaped, invalid UTF-8 as \xHH bytes.
pub fn quote_go(s: &[u8]) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    let mut pos = 0;
    for_utf8_runs(s, |run| match run {
        Ok(valid) => {
            for c in valid.chars() {
                quote_char(&mut out, c);
            }
            pos += valid.len();
        }
        Err(n) => {
            for &b in &s[pos..pos + n] {
                out.push_str("\\x");
                out.push(HEX[(b >> 4) as usize] as char);
                out.push(HEX[(b & 15) as usize] as char);
            }
            pos += n;
        }
    });
    out.push('"');
    out
}

fn quote_char(out: &mut String, c: char) {
    match c {
        '"' => out.push_str("\\\""),
        '\\' => out.push_str("\\\\"),
        '\u{7}' => out.push_str("\\a"),
        '\u{8}' => out.push_str("\\b"),
        '\u{c}' => out.push_str("\\f"),
        '\n' => out.push_str("\\n"),
        '\r' => out.push_str("\\r"),
        '\t' => out.push_str("\\t"),
        '\u{b}' => out.push_str("\\v"),
        c if is_print(c) => out.push(c),
        c => {
            let r = c as u32;
            if r < 0x20 || r == 0x7f {
                out.push_str("\\x");
                out.push(HEX[(r >> 4) as usize] as char);
                out.push(HEX[(r & 15) as usize] as char);
            } else if r < 0x10000 {
                out.push_str("\\u");
                for sh in [12, 8, 4, 0] {
                    out.push(HEX[((r >> sh) & 15) as usize] as char);
                }
            } else {
                out.push_str("\\U");
                for sh in [28, 24, 20, 16, 12, 8, 4, 0] {
                    out.push(HEX[((r >> sh) & 15) as usize] as char);
                }
            }
        }
    }
}

/// Whether c is printable as Go's unicode.IsPrint says: letters, marks,
/// numbers, punctuation, symbols and the ASCII space. Beyond ASCII this is
/// the table Rust's Debug formatting uses (the same categories); the
/// character is tested after another so that a combining mark counts as
/// printable, as it does for Go.
fn is_print(c: char) -> bool {
    if (c as u32) < 0x80 {
        return (0x20..0x7f).contains(&(c as u32));
    }
    let mut buf = [0u8; 5];
    buf[0] = b'a';
    let n = c.encode_utf8(&mut buf[1..]).len();
    let s = std::str::from_utf8(&buf[..1 + n]).unwrap_or("");
    s.escape_debug().count() == 2
}
