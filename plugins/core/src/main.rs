//! core is agenthost's first-party tool plugin: read_file, write_file,
//! list_dir, search and edit, confined to the directories it is granted
//! (usually one, at /workspace).
//!
//! It is a WASI preview1 command speaking the agenthost/1 protocol
//! (docs/plugin-protocol.md). `go generate ./plugins/...` from the
//! repository root builds it into plugins/core.wasm (plugins/gen.go has the
//! recipe); plugins/core_test.go runs that module in wazero.

mod fsys;
mod json;
mod tools;

use std::io::{self, BufRead, Read, Write};

/// The agenthost/1 manifest. plugins/gen.go also copies it into the
/// custom section "agenthost.manifest" of core.wasm.
static MANIFEST: &[u8] = include_bytes!("../manifest.json");

// Exit codes of agenthost/1.
/// Result on stdout.
const EXIT_OK: i32 = 0;
/// Error result on stdout, shown to the model.
const EXIT_TOOL_ERROR: i32 = 1;
/// The host broke the protocol; message on stderr.
const EXIT_MISUSE: i32 = 2;

/// Caps one request (call mode: stdin; reuse mode: one line).
const MAX_REQUEST: usize = 64 << 20;

fn env(name: &str) -> Vec<u8> {
    std::env::var_os(name).map(|v| fsys::name_bytes(&v).to_vec()).unwrap_or_default()
}

fn main() {
    let mode = env("AGENTHOST_MODE");
    let tool = String::from_utf8_lossy(&env("AGENTHOST_TOOL")).into_owned();
    let stdin = io::stdin();
    let mut stdin = stdin.lock();
    let stdout = io::stdout();
    let mut stdout = stdout.lock();
    let mut stderr = io::stderr();
    let code = if mode == b"call" && env("AGENTHOST_REUSE") == b"1" {
        let w = tools::Workspace::new(fsys::mount_roots());
        serve(&w, &tool, &mut stdin, &mut stdout, &mut stderr)
    } else {
        run(&mode, &tool, &mut stdin, &mut stdout, &mut stderr)
    };
    let code = if stdout.flush().is_err() { EXIT_MISUSE } else { code };
    std::process::exit(code);
}

/// One call (or a describe run): the exit code.
fn run(mode: &[u8], tool: &str, stdin: &mut impl Read, stdout: &mut impl Write, stderr: &mut impl Write) -> i32 {
    match mode {
        b"describe" => {
            return if stdout.write_all(MANIFEST).is_ok() { EXIT_OK } else { EXIT_MISUSE };
        }
        b"call" => {}
        _ => {
            let msg = format!("core: AGENTHOST_MODE is {}, want \"describe\" or \"call\"\n", json::quote_json(mode));
            let _ = stderr.write_all(msg.as_bytes());
            return EXIT_MISUSE;
        }
    }
    let mut data = Vec::new();
    if let Err(e) = stdin.take(MAX_REQUEST as u64 + 1).read_to_end(&mut data) {
        let _ = stderr.write_all(format!("core: reading the request from stdin: {}\n", e).as_bytes());
        return EXIT_MISUSE;
    }
    if data.len() > MAX_REQUEST {
        let _ = stderr.write_all(b"core: the request on stdin is over 64 MiB\n");
        return EXIT_MISUSE;
    }
    let w = tools::Workspace::new(fsys::mount_roots());
    call_request(&w, tool, &data, stdout, stderr)
}

/// Answers many calls from one instance, as the manifest's "reuse" allows
/// when the host sets AGENTHOST_REUSE=1: one request per line of stdin, one
/// result line on stdout for each (is_error marks a tool error), until
/// stdin ends. A request it cannot read ends the instance with EXIT_MISUSE,
/// which fails that call. Each request names its tool (the host does not
/// set AGENTHOST_TOOL in this mode).
fn serve(
    w: &tools::Workspace,
    tool: &str,
    stdin: &mut impl BufRead,
    stdout: &mut impl Write,
    stderr: &mut impl Write,
) -> i32 {
    let mut line = Vec::new();
    loop {
        line.clear();
        let end = match read_line(stdin, &mut line) {
            Ok(end) => end,
            Err(()) => {
                let _ = stderr.write_all(b"core: a request line is over 64 MiB\n");
                return EXIT_MISUSE;
            }
        };
        if !json::trim(&line).is_empty() && call_request(w, tool, &line, stdout, stderr) == EXIT_MISUSE {
            return EXIT_MISUSE;
        }
        if end {
            return EXIT_OK; // the host closed stdin: no more calls
        }
    }
}

/// Reads one line, its newline included, into line: Ok(true) when stdin
/// ended (or failed) instead, Err when the line is over MAX_REQUEST.
fn read_line(r: &mut impl BufRead, line: &mut Vec<u8>) -> Result<bool, ()> {
    loop {
        let buf = match r.fill_buf() {
            Ok(b) => b,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(_) => return Ok(true),
        };
        if buf.is_empty() {
            return Ok(true);
        }
        let (n, done) = match buf.iter().position(|&c| c == b'\n') {
            Some(i) => (i + 1, true),
            None => (buf.len(), false),
        };
        line.extend_from_slice(&buf[..n]);
        r.consume(n);
        if line.len() > MAX_REQUEST {
            return Err(());
        }
        if done {
            return Ok(false);
        }
    }
}

/// Serves one request document: writes the result on stdout and returns
/// the exit code.
fn call_request(w: &tools::Workspace, tool: &str, data: &[u8], stdout: &mut impl Write, stderr: &mut impl Write) -> i32 {
    let req = match json::parse_request(data) {
        Ok(r) => r,
        Err(e) => {
            let msg = format!(
                "core: the request on stdin is not a JSON object {{\"tool\",\"arguments\",\"call_id\"}}: {}\n",
                e
            );
            let _ = stderr.write_all(msg.as_bytes());
            return EXIT_MISUSE;
        }
    };
    let tool = if tool.is_empty() {
        req.tool.as_str()
    } else if !req.tool.is_empty() && req.tool != tool {
        let msg = format!(
            "core: AGENTHOST_TOOL is {} but the request names {}\n",
            json::quote_json(tool.as_bytes()),
            json::quote_json(req.tool.as_bytes())
        );
        let _ = stderr.write_all(msg.as_bytes());
        return EXIT_MISUSE;
    } else {
        tool
    };
    let (text, code) = match tools::call(w, tool, req.arguments) {
        Ok(t) => (t, EXIT_OK),
        Err(t) => (t, EXIT_TOOL_ERROR),
    };
    let mut out = Vec::with_capacity(text.len() + 64);
    json::append_result(&mut out, &text, code == EXIT_TOOL_ERROR);
    if stdout.write_all(&out).is_err() || stdout.flush().is_err() {
        return EXIT_MISUSE;
    }
    code
}
