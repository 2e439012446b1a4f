// The components the JavaScript tests call, built by the tests with
// ComponentizeJS: rich types, hostile loops, files and fetch.
import { getDirectories } from 'wasi:filesystem/preopens@0.2.12';
import { get } from 'wasi:config/store@0.2.0-draft';

export const shapes = {
  echo(p) {
    return p;
  },
  area(s) {
    switch (s.tag) {
      case 'circle':
        return Math.PI * s.val * s.val;
      case 'square':
        return s.val * s.val;
      default:
        throw 'no shape';
    }
  },
  mix(c, f, t, l, o) {
    const set = Object.keys(f).filter((k) => f[k]).join('+');
    return [c, { read: !f.read, write: !f.write, exec: !f.exec }, `${set}:${t[0]}:${t[1]}:${l.length}:${l.reduce((a, b) => a + b, 0)}`, o === undefined ? 42n : o + 1n];
  },
  points(n) {
    const out = [];
    for (let i = 0; i < n; i++) out.push({ x: i, y: -i, label: i % 2 ? `p${i}` : undefined });
    return out;
  },
};

export function hello(name) {
  console.log(`greeting ${name}`);
  return `hello ${name}`;
}

export function spin() {
  for (;;) {}
}

export function bomb() {
  const keep = [];
  for (;;) keep.push(new Float64Array(1 << 20).fill(keep.length));
}

export function flood() {
  const line = 'x'.repeat(1000);
  for (;;) console.log(line);
}

function mount() {
  const dirs = getDirectories();
  if (dirs.length === 0) throw 'no mount';
  return dirs[0][0];
}

function reason(e) {
  if (e && e.payload !== undefined) {
    return typeof e.payload === 'string' ? e.payload : JSON.stringify(e.payload);
  }
  return String(e);
}

export function mounts() {
  return getDirectories().map(([, name]) => name);
}

export function readFile(path) {
  try {
    const f = mount().openAt({ symlinkFollow: true }, path, {}, { read: true });
    const s = f.readViaStream(0n);
    const chunks = [];
    let n = 0;
    for (;;) {
      let c;
      try {
        c = s.blockingRead(65536n);
      } catch (e) {
        if (e.payload && e.payload.tag === 'closed') break;
        throw e;
      }
      chunks.push(c);
      n += c.length;
    }
    const all = new Uint8Array(n);
    let off = 0;
    for (const c of chunks) {
      all.set(c, off);
      off += c.length;
    }
    return new TextDecoder().decode(all);
  } catch (e) {
    throw reason(e);
  }
}

export function writeFile(path, contents) {
  try {
    const f = mount().openAt({ symlinkFollow: true }, path, { create: true, truncate: true }, { write: true });
    const s = f.writeViaStream(0n);
    const bytes = new TextEncoder().encode(contents);
    for (let off = 0; off < bytes.length; off += 4096) {
      s.blockingWriteAndFlush(bytes.subarray(off, off + 4096));
    }
    return BigInt(bytes.length);
  } catch (e) {
    throw reason(e);
  }
}

// writeAt grows path to offset + 1 bytes, how: with descriptor.write of
// one byte at offset ("write"), a write-via-stream from offset ("stream"),
// or set-size ("set-size"); it returns the file's size.
export function writeAt(path, offset, how) {
  try {
    const f = mount().openAt({ symlinkFollow: true }, path, { create: true }, { write: true, read: true });
    const one = new Uint8Array([1]);
    if (how === 'write') {
      f.write(one, offset);
    } else if (how === 'stream') {
      f.writeViaStream(offset).blockingWriteAndFlush(one);
    } else {
      f.setSize(offset + 1n);
    }
    return f.stat().size;
  } catch (e) {
    throw reason(e);
  }
}

export function listDir(path) {
  try {
    const d = path === '' || path === '.' ? mount() : mount().openAt({ symlinkFollow: true }, path, { directory: true }, { read: true });
    const entries = d.readDirectory();
    const names = [];
    for (;;) {
      const e = entries.readDirectoryEntry();
      if (e === undefined) break;
      names.push(e.name);
    }
    return names.sort();
  } catch (e) {
    throw reason(e);
  }
}

async function show(url) {
  let r;
  try {
    r = await fetch(url);
  } catch (e) {
    throw `fetch failed: ${e.message || e}`;
  }
  return `${r.status} ${await r.text()}`;
}

export async function fetchUrl(url) {
  return show(url);
}

export async function fetchConfigured(path) {
  const base = get('base_url');
  if (base === undefined) throw 'base_url is not configured';
  return show(base + path);
}
