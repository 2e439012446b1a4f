//! Paths, mounts, file-system errors and directory walks.
//!
//! Paths are byte strings with '/' separators: the guest's file system is
//! WASI's, whose names are bytes, and a name that is not UTF-8 is shown to
//! the model with U+FFFD in its place (the JSON encoder does that).

use std::ffi::OsStr;
use std::fs;
use std::io;
use std::path::Path;

#[cfg(target_os = "wasi")]
use std::os::wasi::ffi::OsStrExt;
#[cfg(not(target_os = "wasi"))]
use std::os::unix::ffi::OsStrExt;

/// The Path of a byte string.
pub fn path(p: &[u8]) -> &Path {
    Path::new(OsStr::from_bytes(p))
}

/// The bytes of a file name.
pub fn name_bytes(n: &OsStr) -> &[u8] {
    n.as_bytes()
}

/// Lexical cleaning, as Go's path.Clean: no repeated or trailing slashes,
/// no "." elements, ".." elements removed with what they undo ("/.." is
/// "/"); "." for an empty result.
pub fn clean(p: &[u8]) -> Vec<u8> {
    if p.is_empty() {
        return b".".to_vec();
    }
    let rooted = p[0] == b'/';
    let n = p.len();
    let mut out: Vec<u8> = Vec::with_capacity(n);
    let (mut r, mut dotdot) = (0, 0);
    if rooted {
        out.push(b'/');
        r = 1;
        dotdot = 1;
    }
    while r < n {
        if p[r] == b'/' {
            r += 1;
        } else if p[r] == b'.' && (r + 1 == n || p[r + 1] == b'/') {
            r += 1;
        } else if p[r] == b'.' && p[r + 1] == b'.' && (r + 2 == n || p[r + 2] == b'/') {
            r += 2;
            if out.len() > dotdot {
                let mut w = out.len() - 1;
                while w > dotdot && out[w] != b'/' {
                    w -= 1;
                }
                out.truncate(w);
            } else if !rooted {
                if !out.is_empty() {
                    out.push(b'/');
                }
                out.extend_from_slice(b"..");
                dotdot = out.len();
            }
        } else {
            if rooted && out.len() != 1 || !rooted && !out.is_empty() {
                out.push(b'/');
            }
            while r < n && p[r] != b'/' {
                out.push(p[r]);
                r += 1;
            }
        }
    }
    if out.is_empty() {
        return b".".to_vec();
    }
    out
}

/// a and b joined with a slash and cleaned (Go's filepath.Join of two
/// non-empty elements).
pub fn join(a: &[u8], b: &[u8]) -> Vec<u8> {
    let mut j = Vec::with_capacity(a.len() + 1 + b.len());
    j.extend_from_slice(a);
    j.push(b'/');
    j.extend_from_slice(b);
    clean(&j)
}

/// All but the last element of p, cleaned; "." when there is none (Go's
/// filepath.Dir).
pub fn dir(p: &[u8]) -> Vec<u8> {
    match p.iter().rposition(|&c| c == b'/') {
        None => b".".to_vec(),
        Some(i) => clean(&p[..i + 1]),
    }
}

/// The path of abs relative to m when abs is m or under it ("." for m
/// itself); both are clean absolute paths.
pub fn under<'a>(m: &[u8], abs: &'a [u8]) -> Option<&'a [u8]> {
    if abs == m {
        return Some(b".");
    }
    if m == b"/" {
        return Some(&abs[1..]);
    }
    if abs.len() > m.len() && abs.starts_with(m) && abs[m.len()] == b'/' {
        return Some(&abs[m.len() + 1..]);
    }
    None
}

/// What went wrong in a file-system call, as far as the messages care.
pub enum FsErr {
    NotExist,
    /// A bad descriptor, or a path under no preopened directory: what a
    /// WASI runtime reports for a path when nothing is mounted. The text is
    /// the error's own, for when the mount is there after all.
    NoMount(String),
    ReadOnly,
    NoSys,
    Permission,
    NotDir,
    Other(String),
}

// WASI errno values (wasi_snapshot_preview1), which is what the standard
// library reports on WASI.
const WASI_ACCES: i32 = 2;
const WASI_BADF: i32 = 8;
const WASI_NOENT: i32 = 44;
const WASI_NOSYS: i32 = 52;
const WASI_NOTDIR: i32 = 54;
const WASI_PERM: i32 = 63;
const WASI_ROFS: i32 = 69;
const WASI_NOTCAPABLE: i32 = 76;

/// The WASI errno of e.
#[cfg(target_os = "wasi")]
fn wasi_errno(e: &io::Error) -> Option<i32> {
    e.raw_os_error()
}

/// The WASI errno of e (native builds map Linux's numbers; only for tests
/// of the tool logic outside a WASI runtime).
#[cfg(not(target_os = "wasi"))]
fn wasi_errno(e: &io::Error) -> Option<i32> {
    let n = e.raw_os_error()?;
    Some(match n {
        1 => WASI_PERM,
        2 => WASI_NOENT,
        9 => WASI_BADF,
        13 => WASI_ACCES,
        17 => 20,
        20 => WASI_NOTDIR,
        21 => 31,
        22 => 28,
        24 => 33,
        27 => 22,
        28 => 51,
        30 => WASI_ROFS,
        36 => 37,
        38 => WASI_NOSYS,
        39 => 55,
        40 => 32,
        5 => 29,
        _ => 1000 + n,
    })
}

/// The message of a WASI errno, as Go's syscall package words it for
/// wasip1 (the ones a file tool can meet).
fn errno_text(n: i32) -> String {
    let s = match n {
        10 => "Device or resource busy",
        19 => "Quota exceeded",
        20 => "File exists",
        22 => "File too large",
        25 => "EILSEQ",
        28 => "Invalid argument",
        29 => "I/O error",
        31 => "Is a directory",
        32 => "Too many symbolic links",
        33 => "Too many open files",
        37 => "File name too long",
        41 => "File table overflow",
        48 => "Out of memory",
        51 => "No space left on device",
        55 => "Directory not empty",
        58 => "Not supported",
        61 => "Value too large for defined data type",
        74 => "Text file busy",
        75 => "Cross-device link",
        _ => return format!("errno {}", n),
    };
    s.to_string()
}

pub fn classify(e: &io::Error) -> FsErr {
    match wasi_errno(e) {
        Some(WASI_NOENT) => FsErr::NotExist,
        Some(WASI_BADF) => FsErr::NoMount("Bad file number".to_string()),
        Some(WASI_ROFS) => FsErr::ReadOnly,
        Some(WASI_NOSYS) => FsErr::NoSys,
        Some(WASI_ACCES) | Some(WASI_PERM) | Some(WASI_NOTCAPABLE) => FsErr::Permission,
        Some(WASI_NOTDIR) => FsErr::NotDir,
        Some(n) => FsErr::Other(errno_text(n)),
        // The standard library's own error for a path under no preopen.
        None => FsErr::NoMount(e.to_string()),
    }
}

/// Creates directory p and its missing parents, as Go's os.MkdirAll: an
/// existing file in the way is ENOTDIR.
pub fn mkdir_all(p: &[u8]) -> Result<(), FsErr> {
    match fs::metadata(path(p)) {
        Ok(m) if m.is_dir() => return Ok(()),
        Ok(_) => return Err(FsErr::NotDir),
        Err(_) => {}
    }
    let mut end = p.len();
    while end > 0 && p[end - 1] == b'/' {
        end -= 1;
    }
    let mut j = end;
    while j > 0 && p[j - 1] != b'/' {
        j -= 1;
    }
    if j > 1 {
        mkdir_all(&p[..j - 1])?;
    }
    match fs::create_dir(path(p)) {
        Ok(()) => Ok(()),
        Err(e) => match fs::metadata(path(p)) {
            Ok(m) if m.is_dir() => Ok(()),
            _ => Err(classify(&e)),
        },
    }
}

/// One directory entry of a walk.
pub struct Entry {
    /// The entry's path relative to the walk's root.
    pub rel: Vec<u8>,
    /// The entry's absolute path.
    pub abs: Vec<u8>,
    /// Its name (the last element of rel).
    pub name_len: usize,
    /// A directory (symbolic links are not followed).
    pub is_dir: bool,
}

impl Entry {
    pub fn name(&self) -> &[u8] {
        &self.rel[self.rel.len() - self.name_len..]
    }
}

/// What a walk does after an entry.
pub enum Step {
    Continue,
    /// Do not descend into this directory.
    SkipDir,
    /// End the walk.
    Stop,
}

/// Reads a directory's entries sorted by name: (name, is a directory).
pub fn read_dir(p: &[u8]) -> io::Result<Vec<(Vec<u8>, bool)>> {
    let mut out = Vec::new();
    for e in fs::read_dir(path(p))? {
        let e = e?;
        let is_dir = e.file_type().map(|t| t.is_dir()).unwrap_or(false);
        out.push((name_bytes(&e.file_name()).to_vec(), is_dir));
    }
    out.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    Ok(out)
}

/// Walks the tree under the directory root in lexical order, depth first,
/// calling f with each entry (directories before their contents). A
/// directory that cannot be read is given to f and its contents skipped;
/// an error reading root itself is returned. The walk keeps its own stack,
/// so a deep tree costs heap, not the guest's call stack.
pub fn walk(root: &[u8], mut f: impl FnMut(&Entry) -> Step) -> io::Result<()> {
    struct Level {
        rel: Vec<u8>,
        abs: Vec<u8>,
        entries: std::vec::IntoIter<(Vec<u8>, bool)>,
    }
    let first = read_dir(root)?;
    let mut stack = vec![Level { rel: Vec::new(), abs: root.to_vec(), entries: first.into_iter() }];
    while let Some(level) = stack.last_mut() {
        let (name, is_dir) = match level.entries.next() {
            None => {
                stack.pop();
                continue;
            }
            Some(e) => e,
        };
        let rel = if level.rel.is_empty() { name.clone() } else { join(&level.rel, &name) };
        let abs = join(&level.abs, &name);
        let e = Entry { rel, abs, name_len: name.len(), is_dir };
        match f(&e) {
            Step::Stop => return Ok(()),
            Step::SkipDir => continue,
            Step::Continue => {}
        }
        if e.is_dir {
            // An unreadable directory is listed (above) without contents.
            if let Ok(entries) = read_dir(&e.abs) {
                stack.push(Level { rel: e.rel, abs: e.abs, entries: entries.into_iter() });
            }
        }
    }
    Ok(())
}

#[cfg(target_os = "wasi")]
mod preopens {
    #[link(wasm_import_module = "wasi_snapshot_preview1")]
    extern "C" {
        #[link_name = "fd_prestat_get"]
        pub fn prestat_get(fd: u32, buf: *mut u32) -> u16;
        #[link_name = "fd_prestat_dir_name"]
        pub fn prestat_dir_name(fd: u32, buf: *mut u8, len: u32) -> u16;
    }
}

/// The directories the host preopened, by guest path, in mount order: WASI
/// numbers preopens from descriptor 3 and names each by its guest path; the
/// first descriptor that is not a preopen ends the list. Only absolute
/// directory names count.
#[cfg(target_os = "wasi")]
pub fn mount_roots() -> Vec<Vec<u8>> {
    let mut roots = Vec::new();
    let mut fd = 3u32;
    loop {
        // u8 tag (0 = directory), padding, u32 name length.
        let mut prestat = [0u32; 2];
        if unsafe { preopens::prestat_get(fd, prestat.as_mut_ptr()) } != 0 {
            return roots;
        }
        if prestat[0] & 0xff == 0 && prestat[1] != 0 && prestat[1] <= 4096 {
            let mut name = vec![0u8; prestat[1] as usize];
            if unsafe { preopens::prestat_dir_name(fd, name.as_mut_ptr(), prestat[1]) } == 0 {
                // Some runtimes count a trailing NUL in the length.
                while name.last() == Some(&0) {
                    name.pop();
                }
                if name.first() == Some(&b'/') {
                    roots.push(name);
                }
            }
        }
        fd += 1;
    }
}

/// /workspace outside WASI (native builds only run the tool logic).
#[cfg(not(target_os = "wasi"))]
pub fn mount_roots() -> Vec<Vec<u8>> {
    vec![b"/workspace".to_vec()]
}
