// HTTP through fetch (wasi:http/outgoing-handler), built by the tests
// with ComponentizeJS.
import { get } from 'wasi:config/store@0.2.0-draft';

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
