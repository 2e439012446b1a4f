//! The five tools. Each returns the result text, or the text of a tool
//! error for the model; texts are bytes because they carry file contents
//! and names that need not be UTF-8.

use std::fs;
use std::io::Read;

use crate::fsys::{self, FsErr, Step};
use crate::json::{self, quote_go, quote_json, Args};

// Limits of the tools. They keep one result well under the host's default
// 1 MiB output cap and the model's context.
/// Bytes; read_file, edit and search refuse or skip bigger files.
const MAX_FILE_SIZE: u64 = 4 << 20;
/// Lines per read_file call.
const MAX_READ_LINES: i64 = 2000;
/// Bytes of one line shown by read_file.
const MAX_LINE_LEN: usize = 2000;
/// Bytes of text in one result; JSON escaping can grow it up to 6x.
const MAX_OUTPUT: usize = 128 << 10;
/// list_dir entries.
const MAX_ENTRIES: usize = 1000;
/// search matches by default and at most.
const DEFAULT_HITS: i64 = 100;
const MAX_HITS: i64 = 1000;
/// Bytes of one line shown by search.
const MAX_HIT_LINE_LEN: usize = 300;
/// Bytes looked at for a NUL to call a file binary.
const BINARY_SNIFF: usize = 8000;
/// Files one search reads, so that a huge tree ends in a clear message
/// rather than the host's timeout.
const MAX_SEARCH_FILES: usize = 20000;

const TRUNCATED: &[u8] = " … [line truncated]".as_bytes();

/// The usual guest path of the workspace mount; core serves whatever
/// mounts it is granted and assumes this one when it has none, so that its
/// messages say what to mount.
const WORKSPACE_ROOT: &[u8] = b"/workspace";

type Res = Result<Vec<u8>, Vec<u8>>;

/// Concatenates parts into one message.
fn cat(parts: &[&[u8]]) -> Vec<u8> {
    let mut v = Vec::with_capacity(parts.iter().map(|p| p.len()).sum());
    for p in parts {
        v.extend_from_slice(p);
    }
    v
}

fn num(n: i64) -> Vec<u8> {
    n.to_string().into_bytes()
}

/// Resolves and confines paths to the mounts core was granted. The host
/// sandbox is what really confines the plugin; the checks here give the
/// model clear messages instead of bare "not found" errors.
pub struct Workspace {
    /// Where relative paths start: the first mount.
    root: Vec<u8>,
    /// Every mount the tools may reach, root first.
    mounts: Vec<Vec<u8>>,
}

impl Workspace {
    /// The workspace over the mounts, in mount order; with none it assumes
    /// /workspace, so the messages say what to mount.
    pub fn new(roots: Vec<Vec<u8>>) -> Workspace {
        let mut mounts: Vec<Vec<u8>> = roots.iter().map(|r| fsys::clean(r)).collect();
        if mounts.is_empty() {
            mounts.push(WORKSPACE_ROOT.to_vec());
        }
        Workspace { root: mounts[0].clone(), mounts }
    }

    /// The mount that holds abs (the longest match).
    fn mount_of(&self, abs: &[u8]) -> Option<&[u8]> {
        let mut best: Option<&[u8]> = None;
        for m in &self.mounts {
            if fsys::under(m, abs).is_some() && best.map_or(true, |b| m.len() > b.len()) {
                best = Some(m);
            }
        }
        best
    }

    /// The absolute path for p and the path to show the model: relative to
    /// the root ("." for the root itself), absolute under another mount, so
    /// the model can pass it back as it is.
    fn resolve(&self, p: &str) -> Result<(Vec<u8>, Vec<u8>), Vec<u8>> {
        let p = if p.is_empty() { "." } else { p };
        let abs = if p.starts_with('/') {
            fsys::clean(p.as_bytes())
        } else {
            fsys::join(&self.root, p.as_bytes())
        };
        let m = match self.mount_of(&abs) {
            None => return Err(self.outside(p)),
            Some(m) => m,
        };
        if m != self.root.as_slice() {
            return Ok((abs.clone(), abs));
        }
        let show = fsys::under(&self.root, &abs).unwrap_or(b".").to_vec();
        Ok((abs, show))
    }

    /// The error for a path under no mount.
    fn outside(&self, p: &str) -> Vec<u8> {
        let q = quote_go(p.as_bytes());
        if self.mounts.len() <= 1 {
            return cat(&[
                b"path ",
                q.as_bytes(),
                b" is outside ",
                &self.root,
                b"; the tools can only reach files under ",
                &self.root,
            ]);
        }
        let all = self.mounts.join(&b", "[..]);
        cat(&[
            b"path ",
            q.as_bytes(),
            b" is outside the mounted directories; the tools can only reach files under ",
            &all,
            b" (relative paths start at ",
            &self.root,
            b")",
        ])
    }

    /// Turns a file-system error into a message naming the path and saying
    /// what to do.
    fn fs_error(&self, show: &[u8], e: FsErr) -> Vec<u8> {
        if matches!(e, FsErr::NotExist | FsErr::NoMount(_)) && fs::metadata(fsys::path(&self.root)).is_err() {
            // Without a mount, WASI runtimes report paths under it as
            // missing or as bad descriptors; say what is really wrong.
            return cat(&[
                show,
                b": no file system is mounted at ",
                &self.root,
                b"; the agent's configuration must grant a mount there (mount { guest = ",
                quote_go(&self.root).as_bytes(),
                b" })",
            ]);
        }
        match e {
            FsErr::NotExist => cat(&[
                show,
                b": not found (paths are relative to ",
                &self.root,
                b"; use list_dir to see what exists)",
            ]),
            FsErr::ReadOnly => cat(&[show, b": the workspace is mounted read-only; writing is not allowed"]),
            FsErr::NoSys => cat(&[
                show,
                b": the workspace file system does not support this operation (it is probably mounted read-only)",
            ]),
            FsErr::Permission => cat(&[show, b": permission denied (the mount may be read-only)"]),
            FsErr::NotDir => cat(&[show, b": a parent of this path is a file, not a directory"]),
            FsErr::NoMount(t) | FsErr::Other(t) => cat(&[show, b": ", t.as_bytes()]),
        }
    }

    fn io_error(&self, show: &[u8], e: std::io::Error) -> Vec<u8> {
        self.fs_error(show, fsys::classify(&e))
    }

    /// Reads a regular text file of at most MAX_FILE_SIZE bytes.
    fn read_text(&self, abs: &[u8], show: &[u8]) -> Res {
        let md = fs::metadata(fsys::path(abs)).map_err(|e| self.io_error(show, e))?;
        if md.is_dir() {
            return Err(cat(&[show, b": is a directory; use list_dir to list it"]));
        }
        if !md.is_file() {
            return Err(cat(&[show, b": not a regular file"]));
        }
        if md.len() > MAX_FILE_SIZE {
            return Err(cat(&[
                show,
                b": too large (",
                size(md.len()).as_bytes(),
                b", over the ",
                size(MAX_FILE_SIZE).as_bytes(),
                b" limit); use search to find the lines you need",
            ]));
        }
        let f = fs::File::open(fsys::path(abs)).map_err(|e| self.io_error(show, e))?;
        // 512: room to see the end without growing.
        let mut data = Vec::with_capacity(md.len().min(MAX_FILE_SIZE) as usize + 512);
        f.take(MAX_FILE_SIZE + 1).read_to_end(&mut data).map_err(|e| self.io_error(show, e))?;
        if data.len() as u64 > MAX_FILE_SIZE {
            // It grew since the metadata was read.
            return Err(cat(&[show, b": too large (over the ", size(MAX_FILE_SIZE).as_bytes(), b" limit)"]));
        }
        if is_binary(&data) {
            return Err(cat(&[
                show,
                b": looks like a binary file (it contains NUL bytes); only text files can be read",
            ]));
        }
        Ok(data)
    }
}

fn is_binary(data: &[u8]) -> bool {
    data[..data.len().min(BINARY_SNIFF)].contains(&0)
}

fn count_newlines(b: &[u8]) -> usize {
    b.iter().filter(|&&c| c == b'\n').count()
}

/// s cut to at most n bytes on a character boundary (a byte that is not a
/// UTF-8 continuation byte), and whether it was cut.
fn clip(s: &[u8], n: usize) -> (&[u8], bool) {
    if s.len() <= n {
        return (s, false);
    }
    let mut n = n;
    while n > 0 && s[n] & 0xc0 == 0x80 {
        n -= 1;
    }
    (&s[..n], true)
}

fn push_clipped(out: &mut Vec<u8>, s: &[u8], n: usize) {
    let (c, cut) = clip(s, n);
    out.extend_from_slice(c);
    if cut {
        out.extend_from_slice(TRUNCATED);
    }
}

/// A size in bytes as "N bytes", "N.N KiB" or "N.N MiB" (one decimal,
/// rounded half to even, as Go's strconv.FormatFloat).
fn size(n: u64) -> String {
    let (shift, unit) = if n >= 1 << 20 {
        (20, " MiB")
    } else if n >= 1 << 10 {
        (10, " KiB")
    } else {
        return format!("{} bytes", n);
    };
    let x = n as u128 * 10;
    let mut tenths = x >> shift;
    let rem = x & ((1 << shift) - 1);
    let half = 1u128 << (shift - 1);
    if rem > half || rem == half && tenths % 2 == 1 {
        tenths += 1;
    }
    format!("{}.{}{}", tenths / 10, tenths % 10, unit)
}

/// Dispatches one call: the result text, or the text of a tool error.
pub fn call(w: &Workspace, tool: &str, args: &[u8]) -> Res {
    let known = ["read_file", "write_file", "list_dir", "search", "edit"];
    if !known.contains(&tool) {
        return Err(cat(&[
            b"unknown tool ",
            quote_json(tool.as_bytes()).as_bytes(),
            b"; core has read_file, write_file, list_dir, search and edit",
        ]));
    }
    let prefix = |e: String| cat(&[tool.as_bytes(), b": ", e.as_bytes()]);
    let a = Args::new(json::parse_args(args).map_err(prefix)?);
    match tool {
        "read_file" => read_file(w, a),
        "write_file" => write_file(w, a),
        "list_dir" => list_dir(w, a),
        "search" => search(w, a),
        _ => edit(w, a),
    }
    .map_err(|e| match e {
        Failure::Args(e) => prefix(e),
        Failure::Text(t) => t,
    })
}

/// A tool's failure: its arguments (prefixed with the tool's name by
/// call), or a message of its own.
enum Failure {
    Args(String),
    Text(Vec<u8>),
}

impl From<Vec<u8>> for Failure {
    fn from(t: Vec<u8>) -> Failure {
        Failure::Text(t)
    }
}

type ToolRes = Result<Vec<u8>, Failure>;

fn finish(a: Args) -> Result<(), Failure> {
    a.finish().map_err(Failure::Args)
}

fn read_file(w: &Workspace, mut a: Args) -> ToolRes {
    let path = a.string("path").unwrap_or_default();
    let offset = a.integer("offset");
    let limit = a.integer("limit");
    finish(a)?;
    if path.is_empty() {
        return Err(Failure::Text(b"read_file: path is required".to_vec()));
    }
    if offset < 0 || limit < 0 {
        return Err(Failure::Text(cat(&[
            b"read_file: offset (",
            &num(offset),
            b") and limit (",
            &num(limit),
            b") must be at least 1",
        ])));
    }
    let (abs, show) = w.resolve(&path)?;
    let data = w.read_text(&abs, &show)?;
    if data.is_empty() {
        return Ok(cat(&[&show, b" is empty"]));
    }
    let body = data.strip_suffix(b"\n").unwrap_or(&data);
    let total = count_newlines(body) as i64 + 1;
    let start = offset.max(1);
    if start > total {
        return Err(Failure::Text(cat(&[
            &show,
            b": offset ",
            &num(start),
            b" is past the end of the file (",
            &num(total),
            b" lines)",
        ])));
    }
    let limit = if limit == 0 || limit > MAX_READ_LINES { MAX_READ_LINES } else { limit };
    let mut end = (start - 1 + limit).min(total); // last line shown, 1-based
    let mut lines = body.split(|&c| c == b'\n').skip((start - 1) as usize);
    let mut out = Vec::with_capacity(body.len().min(MAX_OUTPUT) + 256);
    for n in start..=end {
        let text = lines.next().unwrap_or(b"");
        let text = text.strip_suffix(b"\r").unwrap_or(text);
        let (shown, cut) = clip(text, MAX_LINE_LEN);
        let digits = num(n);
        let width = digits.len().max(6);
        let len = width + 1 + shown.len() + if cut { TRUNCATED.len() } else { 0 } + 1;
        if out.len() + len > MAX_OUTPUT && n > start {
            end = n - 1;
            break;
        }
        out.resize(out.len() + width - digits.len(), b' ');
        out.extend_from_slice(&digits);
        out.push(b'\t');
        out.extend_from_slice(shown);
        if cut {
            out.extend_from_slice(TRUNCATED);
        }
        out.push(b'\n');
    }
    if end < total {
        out.extend_from_slice(&cat(&[
            b"(showing lines ",
            &num(start),
            b"-",
            &num(end),
            b" of ",
            &num(total),
            b"; call read_file with offset ",
            &num(end + 1),
            b" to continue)\n",
        ]));
    }
    Ok(out)
}

fn write_file(w: &Workspace, mut a: Args) -> ToolRes {
    let path = a.string("path").unwrap_or_default();
    let content = a.string("content");
    finish(a)?;
    if path.is_empty() {
        return Err(Failure::Text(b"write_file: path is required".to_vec()));
    }
    let content = match content {
        None => return Err(Failure::Text(b"write_file: content is required (use \"\" for an empty file)".to_vec())),
        Some(c) => c,
    };
    let (abs, show) = w.resolve(&path)?;
    if show == b"." {
        return Err(Failure::Text(cat(&[
            b"write_file: path ",
            quote_go(path.as_bytes()).as_bytes(),
            b" is the workspace directory itself; name a file",
        ])));
    }
    let mut verb: &[u8] = b"created";
    if let Ok(md) = fs::metadata(fsys::path(&abs)) {
        if md.is_dir() {
            return Err(Failure::Text(cat(&[&show, b": is a directory; name a file to write"])));
        }
        verb = b"overwrote";
    }
    if let Err(e) = fs::metadata(fsys::path(&w.root)) {
        // No mount: do not create the root.
        return Err(Failure::Text(w.io_error(&show, e)));
    }
    if let Err(e) = fsys::mkdir_all(&fsys::dir(&abs)) {
        return Err(Failure::Text(w.fs_error(&fsys::dir(&show), e)));
    }
    if let Err(e) = write(&abs, content.as_bytes()) {
        return Err(Failure::Text(w.io_error(&show, e)));
    }
    Ok(cat(&[verb, b" ", &show, b" (", &num(content.len() as i64), b" bytes)"]))
}

/// Writes data to the file at p, created if missing (0644 where modes
/// exist) or truncated; an existing file keeps its mode.
fn write(p: &[u8], data: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    let mut o = fs::OpenOptions::new();
    o.write(true).create(true).truncate(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        o.mode(0o644);
    }
    o.open(fsys::path(p))?.write_all(data)
}

fn list_dir(w: &Workspace, mut a: Args) -> ToolRes {
    let path = a.string("path").unwrap_or_default();
    let recursive = a.boolean("recursive");
    finish(a)?;
    let (abs, show) = w.resolve(&path)?;
    let md = fs::metadata(fsys::path(&abs)).map_err(|e| w.io_error(&show, e))?;
    if !md.is_dir() {
        return Err(Failure::Text(cat(&[&show, b": not a directory; use read_file to read a file"])));
    }
    let mut out: Vec<u8> = Vec::new();
    let mut count = 0;
    let mut truncated = false;
    let mut add = |p: &[u8], is_dir: bool| -> bool {
        if count == MAX_ENTRIES {
            truncated = true;
            return false;
        }
        count += 1;
        out.extend_from_slice(&fsys::join(&show, p));
        if is_dir {
            out.push(b'/');
        }
        out.push(b'\n');
        true
    };
    if recursive {
        fsys::walk(&abs, |e| {
            if !add(&e.rel, e.is_dir) {
                return Step::Stop;
            }
            if e.is_dir && e.name() == b".git" {
                return Step::SkipDir;
            }
            Step::Continue
        })
        .map_err(|e| w.io_error(&show, e))?;
    } else {
        let entries = fsys::read_dir(&abs).map_err(|e| w.io_error(&show, e))?;
        for (name, is_dir) in entries {
            if !add(&name, is_dir) {
                break;
            }
        }
    }
    if count == 0 {
        return Ok(cat(&[&show, b"/ is empty"]));
    }
    if truncated {
        out.extend_from_slice(&cat(&[
            b"(stopped after ",
            &num(MAX_ENTRIES as i64),
            b" entries; list a subdirectory to see more)\n",
        ]));
    }
    Ok(out)
}

/// The message for a pattern the regex crate refused: the parser's own
/// words for what is wrong and where, on one line.
fn regex_error(pattern: &str, case_insensitive: bool, err: regex::Error) -> String {
    let parsed = regex_syntax::ParserBuilder::new().case_insensitive(case_insensitive).build().parse(pattern);
    match parsed {
        Err(regex_syntax::Error::Parse(e)) => format!("{} at byte {}", e.kind(), e.span().start.offset),
        Err(regex_syntax::Error::Translate(e)) => format!("{} at byte {}", e.kind(), e.span().start.offset),
        _ => match err {
            regex::Error::CompiledTooBig(n) => {
                format!("the compiled pattern would exceed {} bytes; make it simpler", n)
            }
            e => e.to_string().split_whitespace().collect::<Vec<_>>().join(" "),
        },
    }
}

/// The matches of one search so far.
struct Hits {
    re: regex::bytes::Regex,
    limit: usize,
    out: Vec<u8>,
    count: usize,
    /// The result is full: limit matches, or MAX_OUTPUT bytes.
    full: bool,
}

impl Hits {
    /// Adds the matching lines of the file at p, shown as rel. Files that
    /// are not regular, too big, binary or unreadable are skipped.
    fn search_file(&mut self, p: &[u8], rel: &[u8]) {
        match fs::metadata(fsys::path(p)) {
            Ok(m) if m.is_file() && m.len() <= MAX_FILE_SIZE => {}
            _ => return,
        }
        let data = match fs::read(fsys::path(p)) {
            Ok(d) if !is_binary(&d) => d,
            _ => return,
        };
        if data.is_empty() {
            return;
        }
        let body = data.strip_suffix(b"\n").unwrap_or(&data);
        for (i, line) in body.split(|&c| c == b'\n').enumerate() {
            let line = line.strip_suffix(b"\r").unwrap_or(line);
            if !self.re.is_match(line) {
                continue;
            }
            let (shown, cut) = clip(line, MAX_HIT_LINE_LEN);
            let no = num(i as i64 + 1);
            let len = rel.len() + 1 + no.len() + 2 + shown.len() + if cut { TRUNCATED.len() } else { 0 } + 1;
            if self.count == self.limit || self.out.len() + len > MAX_OUTPUT {
                self.full = true;
                return;
            }
            self.out.extend_from_slice(rel);
            self.out.push(b':');
            self.out.extend_from_slice(&no);
            self.out.extend_from_slice(b": ");
            push_clipped(&mut self.out, line, MAX_HIT_LINE_LEN);
            self.out.push(b'\n');
            self.count += 1;
        }
    }
}

fn search(w: &Workspace, mut a: Args) -> ToolRes {
    let pattern = a.string("pattern").unwrap_or_default();
    let path = a.string("path").unwrap_or_default();
    let is_regexp = a.boolean("regexp");
    let case_insensitive = a.boolean("case_insensitive");
    let max_results = a.integer("max_results");
    finish(a)?;
    if pattern.is_empty() {
        return Err(Failure::Text(b"search: pattern is required".to_vec()));
    }
    if max_results < 0 {
        return Err(Failure::Text(cat(&[b"search: max_results (", &num(max_results), b") must be at least 1"])));
    }
    let limit = if max_results == 0 { DEFAULT_HITS } else { max_results.min(MAX_HITS) } as usize;
    let expr = if is_regexp { pattern.clone() } else { regex::escape(&pattern) };
    let re = match regex::bytes::RegexBuilder::new(&expr).case_insensitive(case_insensitive).build() {
        Ok(re) => re,
        Err(e) => {
            return Err(Failure::Text(cat(&[
                b"search: invalid regexp ",
                quote_go(pattern.as_bytes()).as_bytes(),
                b": ",
                regex_error(&expr, case_insensitive, e).as_bytes(),
            ])))
        }
    };
    let (abs, show) = w.resolve(&path)?;
    let md = fs::metadata(fsys::path(&abs)).map_err(|e| w.io_error(&show, e))?;

    let mut h = Hits { re, limit, out: Vec::new(), count: 0, full: false };
    let mut files = 0;
    let mut too_many = false;
    if !md.is_dir() {
        h.search_file(&abs, &show);
    } else {
        fsys::walk(&abs, |e| {
            if e.is_dir {
                return if e.name() == b".git" { Step::SkipDir } else { Step::Continue };
            }
            if files == MAX_SEARCH_FILES {
                too_many = true;
                return Step::Stop;
            }
            files += 1;
            h.search_file(&e.abs, &fsys::join(&show, &e.rel));
            if h.full {
                Step::Stop
            } else {
                Step::Continue
            }
        })
        .map_err(|e| w.io_error(&show, e))?;
    }
    let mut note: Vec<u8> = Vec::new();
    if too_many {
        note = cat(&[
            b"(stopped after reading ",
            &num(MAX_SEARCH_FILES as i64),
            b" files; search a subdirectory to cover the rest)",
        ]);
    }
    let Hits { mut out, count: hits, full, .. } = h;
    if hits == 0 {
        let mut msg = cat(&[b"no matches for ", quote_go(pattern.as_bytes()).as_bytes(), b" under ", &show]);
        if too_many {
            msg.push(b' ');
            msg.extend_from_slice(&note);
        }
        return Ok(msg);
    }
    if too_many {
        out.extend_from_slice(&note);
        out.push(b'\n');
    }
    if full {
        out.extend_from_slice(&cat(&[
            b"(stopped after ",
            &num(hits as i64),
            b" matches; narrow the path or the pattern, or raise max_results)\n",
        ]));
    }
    Ok(out)
}

/// The number of non-overlapping occurrences of needle in hay and the
/// offset of the first. An occurrence of a UTF-8 needle lies within one
/// valid UTF-8 run of hay, so the runs are searched one by one.
fn occurrences(hay: &[u8], needle: &str) -> (usize, usize) {
    let (mut count, mut first, mut base) = (0, 0, 0);
    json::for_utf8_runs(hay, |run| match run {
        Ok(s) => {
            for (j, _) in s.match_indices(needle) {
                if count == 0 {
                    first = base + j;
                }
                count += 1;
            }
            base += s.len();
        }
        Err(n) => base += n,
    });
    (count, first)
}

fn edit(w: &Workspace, mut a: Args) -> ToolRes {
    let path = a.string("path").unwrap_or_default();
    let old = a.string("old_string").unwrap_or_default();
    let new = a.string("new_string");
    finish(a)?;
    if path.is_empty() {
        return Err(Failure::Text(b"edit: path is required".to_vec()));
    }
    if old.is_empty() {
        return Err(Failure::Text(
            b"edit: old_string is required and must not be empty; use write_file to create a file".to_vec(),
        ));
    }
    let new = match new {
        None => return Err(Failure::Text(b"edit: new_string is required (use \"\" to delete old_string)".to_vec())),
        Some(n) => n,
    };
    if old == new {
        return Err(Failure::Text(b"edit: old_string and new_string are identical; nothing to change".to_vec()));
    }
    let (abs, show) = w.resolve(&path)?;
    let data = w.read_text(&abs, &show)?;
    let (n, i) = occurrences(&data, &old);
    match n {
        0 => {
            return Err(Failure::Text(cat(&[
                &show,
                b": old_string not found; it must match the file exactly, whitespace included (read_file shows the current text)",
            ])))
        }
        1 => {}
        _ => {
            return Err(Failure::Text(cat(&[
                &show,
                b": old_string found ",
                &num(n as i64),
                b" times, make old_string unique by including more surrounding lines",
            ])))
        }
    }
    let text = cat(&[&data[..i], new.as_bytes(), &data[i + old.len()..]]);
    if let Err(e) = write(&abs, &text) {
        return Err(Failure::Text(w.io_error(&show, e)));
    }
    let first = count_newlines(&text[..i]) as i64 + 1;
    let last = first + count_newlines(new.as_bytes()) as i64;
    if last > first {
        return Ok(cat(&[
            b"edited ",
            &show,
            b": replaced 1 occurrence, now lines ",
            &num(first),
            b"-",
            &num(last),
        ]));
    }
    Ok(cat(&[b"edited ", &show, b": replaced 1 occurrence at line ", &num(first)]))
}
