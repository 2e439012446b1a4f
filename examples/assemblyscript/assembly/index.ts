// A complete agenthost/1 plugin in AssemblyScript: one tool, "greeting",
// that returns the first line of /workspace/greeting.txt.
//
//   npm install          # assemblyscript and @assemblyscript/wasi-shim
//   npx asc --config asconfig.json --target release   # writes greeting.wasm
//
// The shim gives process.env, process.stdin and process.stdout. Files need
// raw WASI calls, and path_open refuses absolute paths: find the preopen
// named /workspace and open greeting.txt relative to it.

// @ts-ignore: decorator
@external("wasi_snapshot_preview1", "fd_prestat_get")
declare function fd_prestat_get(fd: u32, prestat: usize): u16;
// @ts-ignore: decorator
@external("wasi_snapshot_preview1", "fd_prestat_dir_name")
declare function fd_prestat_dir_name(fd: u32, path: usize, len: usize): u16;
// @ts-ignore: decorator
@external("wasi_snapshot_preview1", "path_open")
declare function path_open(dirfd: u32, dirflags: u32, path: usize, len: usize, oflags: u16,
  rightsBase: u64, rightsInheriting: u64, fdflags: u16, fd: usize): u16;
// @ts-ignore: decorator
@external("wasi_snapshot_preview1", "fd_read")
declare function fd_read(fd: u32, iovs: usize, iovsLen: usize, nread: usize): u16;
// @ts-ignore: decorator
@external("wasi_snapshot_preview1", "fd_close")
declare function fd_close(fd: u32): u16;

const MANIFEST = `{"protocol":"agenthost/1","name":"greeting","version":"0.1.0",
 "tools":[{"name":"greeting","description":"Return the first line of greeting.txt in the workspace.",
  "input_schema":{"type":"object","properties":{},"additionalProperties":false}}],
 "requests":{"fs":[{"guest":"/workspace","access":"ro","reason":"read greeting.txt"}]}}`;

const RIGHTS_FD_READ: u64 = 2;
const scratch = memory.data(16);

// findPreopen returns the descriptor of the preopened directory named guest,
// or -1. Preopens are numbered from 3; fd_prestat_get fails after the last.
function findPreopen(guest: string): i32 {
  for (let fd: u32 = 3; fd_prestat_get(fd, scratch) == 0; fd++) {
    if (load<u8>(scratch) != 0) continue; // not a directory
    const len = load<u32>(scratch, 4);
    const name = new ArrayBuffer(len);
    if (fd_prestat_dir_name(fd, changetype<usize>(name), len) != 0) continue;
    if (String.UTF8.decode(name) == guest) return <i32>fd;
  }
  return -1;
}

// readAll reads fd to the end.
function readAll(fd: u32): string {
  const chunk = new ArrayBuffer(4096);
  let text = "";
  while (true) {
    store<usize>(scratch, changetype<usize>(chunk));
    store<usize>(scratch, chunk.byteLength, sizeof<usize>());
    if (fd_read(fd, scratch, 1, scratch + 2 * sizeof<usize>()) != 0) break;
    const n = load<usize>(scratch, 2 * sizeof<usize>());
    if (n == 0) break;
    text += String.UTF8.decode(chunk.slice(0, <i32>n));
  }
  return text;
}

// reply writes one result, the text JSON-escaped, and returns the exit code.
function reply(text: string, isError: bool): i32 {
  let escaped = "";
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c == 0x22 || c == 0x5c) escaped += "\\" + String.fromCharCode(c);
    else if (c < 0x20) escaped += "\\u" + c.toString(16).padStart(4, "0");
    else escaped += String.fromCharCode(c);
  }
  process.stdout.write(`{"content":[{"type":"text","text":"${escaped}"}],"is_error":${isError ? "true" : "false"}}`);
  return isError ? 1 : 0;
}

function call(): i32 {
  readAll(0); // the request; a real tool parses it (e.g. with assemblyscript-json)
  const dir = findPreopen("/workspace");
  if (dir < 0) return reply("greeting.txt: no directory is mounted at /workspace", true);
  const path = String.UTF8.encode("greeting.txt");
  const errno = path_open(<u32>dir, 0, changetype<usize>(path), path.byteLength, 0, RIGHTS_FD_READ, 0, 0, scratch);
  if (errno != 0) return reply(`greeting.txt: cannot open it (WASI errno ${errno})`, true);
  const fd = load<u32>(scratch);
  const text = readAll(fd);
  fd_close(fd);
  const nl = text.indexOf("\n");
  return reply(nl < 0 ? text : text.substring(0, nl), false);
}

const mode = process.env.has("AGENTHOST_MODE") ? process.env.get("AGENTHOST_MODE") : "";
if (mode == "describe") {
  process.stdout.write(MANIFEST);
} else if (mode == "call") {
  process.exit(call());
} else {
  process.stderr.write("AGENTHOST_MODE must be describe or call\n");
  process.exit(2);
}
