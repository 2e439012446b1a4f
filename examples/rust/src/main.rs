// A complete agenthost/1 plugin in Rust, with no dependencies: one tool,
// "greeting", that returns the first line of /workspace/greeting.txt.
// Rust's std resolves absolute paths against the preopened mounts.
//
//   rustup target add wasm32-wasip1      # Rust 1.78 or later
//   cargo build --release --target wasm32-wasip1
//   # target/wasm32-wasip1/release/greeting.wasm
// Older toolchains name the target wasm32-wasi. Without cargo:
//   rustc --target wasm32-wasip1 -O -o greeting.wasm src/main.rs
use std::io::{Read, Write};

const MANIFEST: &str = r#"{"protocol":"agenthost/1","name":"greeting","version":"0.1.0",
 "tools":[{"name":"greeting","description":"Return the first line of greeting.txt in the workspace.",
  "input_schema":{"type":"object","properties":{},"additionalProperties":false}}],
 "requests":{"fs":[{"guest":"/workspace","access":"ro","reason":"read greeting.txt"}]}}"#;

/// Writes one result, the text JSON-escaped, and returns the exit code.
fn reply(text: &str, is_error: bool) -> i32 {
    let mut escaped = String::new();
    for c in text.chars() {
        match c {
            '"' => escaped.push_str("\\\""),
            '\\' => escaped.push_str("\\\\"),
            c if (c as u32) < 0x20 => escaped.push_str(&format!("\\u{:04x}", c as u32)),
            c => escaped.push(c),
        }
    }
    let out = format!(r#"{{"content":[{{"type":"text","text":"{escaped}"}}],"is_error":{is_error}}}"#);
    std::io::stdout().write_all(out.as_bytes()).unwrap();
    if is_error { 1 } else { 0 }
}

fn call() -> i32 {
    // Read the whole request; a real tool parses it (e.g. with serde_json).
    let mut request = String::new();
    if let Err(e) = std::io::stdin().read_to_string(&mut request) {
        return reply(&format!("reading the request: {e}"), true);
    }
    match std::fs::read_to_string("/workspace/greeting.txt") {
        Ok(text) => reply(text.lines().next().unwrap_or(""), false),
        // Without the mount, std says "failed to find a pre-opened file descriptor ...".
        Err(e) => reply(&format!("greeting.txt: {e} (is /workspace mounted?)"), true),
    }
}

fn main() {
    let code = match std::env::var("AGENTHOST_MODE").as_deref() {
        Ok("describe") => {
            print!("{MANIFEST}");
            0
        }
        Ok("call") => call(),
        _ => {
            eprintln!("AGENTHOST_MODE must be describe or call");
            2
        }
    };
    std::process::exit(code);
}
