// A component with rich types, built by the tests with ComponentizeJS.
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
