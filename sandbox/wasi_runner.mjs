// skillgate's WASI layer: runs one WASI preview-1 module under Node.js's
// node:wasi, inside the kernel sandbox (sandbox/wasm.c builds the plan and
// passes this file to `node --eval`). It gives the module only what the
// policy grants: the preopened folders (read-only ones refused any write
// here, since node:wasi has no read-only preopen), the allowed environment,
// its arguments and SKILL_INPUT, a seeded random_get when the manifest asks.
//
// node:wasi is not a sandbox by itself (Node's documentation says so, and
// it follows a preopen's symlinks out of it): the kernel sandbox around
// this process is what holds then, and what node:wasi opened out of a
// preopen that the kernel let through is closed here again. Each refusal
// is reported on fd 3, a socket to the broker (write only) that the module
// cannot reach (WASI descriptors are the runtime's own table, and a socket
// cannot be reopened through /proc), with the layer that held: "wasi" when
// this process refused it, "kernel" when the kernel refused it.
//
// The configuration (JSON) is read from fd 4, a sealed memfd, and closed
// before the module starts: never in argv (readable by every user of the
// host) or the environment (the dry run, /proc), since it holds the
// module's environment and input.
import { WASI } from 'node:wasi';
import { resolve as resolvePath } from 'node:path';
import { closeSync, fstatSync, lstatSync, openSync, readFileSync, readSync, realpathSync,
         writeSync } from 'node:fs';
import { createHash } from 'node:crypto';

const REPORT_FD = 3, CONFIG_FD = 4;
const TEXT_MAX = 1024; // bytes of a path or message in a report (the broker's line: 4096)
const E = { ACCES: 2, FAULT: 21, INVAL: 28, NOSYS: 52, NOTCAPABLE: 76, PERM: 63, ROFS: 69 };
// rights that change a file's contents (wasi-libc asks them for O_WRONLY/O_RDWR)
const WRITE_RIGHTS = (1n << 0n) | (1n << 6n) | (1n << 8n) | (1n << 22n);
const O_CREAT = 1, O_TRUNC = 8, FD_APPEND = 1;

// A string the broker can take whole: control characters shown as \xNN,
// at most TEXT_MAX bytes once JSON-encoded, a longer one cut in its middle
// (its end names what was reached) and said, never dropped.
function text(s, o) {
  const shown = String(s).replace(/[\x00-\x1f\x7f]/g,
                                  (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`);
  const size = (t) => Buffer.byteLength(JSON.stringify(t));
  if (size(shown) <= TEXT_MAX) return shown;
  const cps = Array.from(shown);
  let k = Math.min(cps.length >> 1, TEXT_MAX >> 1);
  const cut = (n) => `${cps.slice(0, n).join('')} [...] ${cps.slice(cps.length - n).join('')}`;
  for (let i = 0; i < 64 && k > 0 && size(cut(k)) > TEXT_MAX; i++) k = Math.floor(k * 0.8);
  o.cut = true;
  return cut(k);
}

function report(o) {
  for (const k of ['path', 'why']) if (k in o) o[k] = text(o[k], o);
  try { writeSync(REPORT_FD, JSON.stringify(o) + '\n'); } catch { /* run outside skillgate */ }
}

function fail(msg, code) {
  try { writeSync(2, `skillgate (WASI layer): ${msg}\n`); } catch { /* stderr gone */ }
  process.exit(code);
}

const major = Number(process.versions.node.split('.')[0]);
if (!(major >= 20))
  fail(`Node.js ${process.versions.node} is too old: WASM skills need node:wasi with ` +
       'preview1, Node.js 20 or later (Debian package nodejs)', 127);

let cfg = null;
try {
  cfg = JSON.parse(readFileSync(CONFIG_FD, 'utf8'));
  closeSync(CONFIG_FD);
} catch { /* said below */ }
if (!cfg || typeof cfg.module !== 'string') fail('no configuration on fd 4', 127);
report({ t: 'start', runtime: 'node:wasi', version: process.versions.node, wasi: 'preview1' });

function readModule(path, max) {
  const fd = openSync(path, 'r');
  try {
    const size = fstatSync(fd).size;
    if (size > max) fail(`the module is ${size} bytes, over ${max}`, 126);
    const buf = Buffer.alloc(size);
    let off = 0;
    while (off < size) {
      const n = readSync(fd, buf, off, size - off, off);
      if (n <= 0) break;
      off += n;
    }
    return buf.subarray(0, off);
  } finally {
    closeSync(fd);
  }
}

const preopens = {};
for (const p of cfg.preopens) preopens[p.guest] = p.host;
const wasi = new WASI({ version: 'preview1', args: cfg.args, env: cfg.env, preopens,
                        returnOnExit: true });

// WASI fds 3.. are the preopens, in the order given (uvwasi's table).
// Per fd: its guest path and whether it is read-only; a file or folder
// opened beneath a read-only one is read-only too.
const fds = new Map();
cfg.preopens.forEach((p, i) => fds.set(3 + i, { path: p.guest, ro: !p.write, host: p.host,
                                                 root: realRoot(p.host) }));

// realpathSync.native: the C library's realpath, which takes '..' after a
// symlink the way the kernel does (node's JavaScript realpathSync joins a
// link's target as text, so "s/s/../.." with s -> "." resolves wrongly)
const realpath = realpathSync.native;

function realRoot(host) {
  try { return realpath(host); } catch { return host; }
}

let memory = null;
const view = () => new DataView(memory.buffer);
const utf8 = new TextDecoder('utf-8', { fatal: true });
const PATH_MAX = 4096;

// A path exactly as the module gave it, or why the runner will not pass
// it on: uvwasi reads it as a C string (a NUL ends it early), and the
// checks below must see the very bytes the runtime acts on, so a NUL,
// bytes that are not UTF-8 and a path over 4 KiB are refused, never cut.
function readPath(ptr, len) {
  ptr >>>= 0; // i32 arguments come signed: as the runtime reads them, unsigned
  len >>>= 0;
  if (len > PATH_MAX) return { why: `a path of ${len} bytes (over ${PATH_MAX})` };
  let bytes;
  try {
    bytes = Buffer.from(memory.buffer, ptr, len);
  } catch {
    return { why: 'a path outside the module\'s memory' };
  }
  if (bytes.includes(0)) return { why: 'a path with a NUL in it', shown: bytes.toString('utf8') };
  try {
    return { text: utf8.decode(bytes) };
  } catch {
    return { why: 'a path that is not UTF-8', shown: bytes.toString('utf8') };
  }
}
const under = (fd, rel) => {
  const d = fds.get(fd);
  return d ? (rel.startsWith('/') ? rel : `${d.path}/${rel}`) : rel;
};
const hostUnder = (fd, rel) => {
  const d = fds.get(fd);
  return d && d.host && !rel.startsWith('/') ? `${d.host}/${rel}` : null;
};
const within = (p, root) => p === root || p.startsWith(root === '/' ? '/' : `${root}/`);

// Where a path leads, resolved as the kernel will: does it leave its
// preopen? (node:wasi follows symlinks out of one.) Lexically first, as
// uvwasi and realpath both do; then the deepest part that exists is
// resolved, the rest appended. The module is single-threaded and nothing
// else in the sandbox writes its folders, so it resolves the same way for
// the call. Anything that cannot be resolved counts as leaving (deny).
function leaves(dirfd, rel, followFinal, entry = false) {
  const d = fds.get(dirfd), host0 = hostUnder(dirfd, rel);
  if (!d || host0 === null) return false; // uvwasi refuses these itself
  let p = resolvePath(host0), rest = '';
  if (!followFinal && p !== '/') {
    const i = p.lastIndexOf('/');
    rest = p.slice(i);
    p = p.slice(0, i) || '/';
  }
  for (let k = 0; k < PATH_MAX; k++) {
    try {
      const x = realpath(p) + rest;
      // a call that changes a folder's entry names the entry in its parent:
      // the preopen's own folder is an entry of a folder outside it
      return !within(x, d.root) || (entry && x === d.root);
    } catch (e) {
      if (e.code !== 'ENOENT' || p === '/') return true;
      // a part that is a link (dangling, or whose target is missing) is not a
      // plain name: where it leads is for the kernel, and this cannot say
      try {
        if (lstatSync(p).isSymbolicLink()) return true;
      } catch { /* absent: a plain name */ }
      const i = p.lastIndexOf('/');
      rest = p.slice(i) + rest;
      p = p.slice(0, i) || '/';
    }
  }
  return true;
}

const imports = wasi.getImportObject();
const w = imports.wasi_snapshot_preview1;

// A refusal the call came back with: who held it.
function seen(call, path, access, errno) {
  if (errno === E.NOTCAPABLE)
    report({ t: 'denied', call, path, access, errno, layer: 'wasi',
             why: 'outside the preopened folders, or a right the descriptor lacks' });
  else if (errno === E.ACCES || errno === E.PERM || errno === E.ROFS)
    report({ t: 'denied', call, path, access, errno, layer: 'kernel',
             why: 'the runtime let it through; the kernel sandbox refused it' });
  return errno;
}
function refuse(call, path, access, errno, why) {
  report({ t: 'denied', call, path, access, errno, layer: 'wasi', why });
  return errno;
}
const isRo = (fd) => fds.get(fd)?.ro === true;

// Every call that names a path: [its descriptor's argument, its pointer's
// argument (the length follows), whether the final symlink is followed];
// write: it changes a folder, refused in a read-only preopen.
const PATH_CALLS = {
  path_open: { paths: [[0, 2, () => true]] }, // uvwasi never passes O_NOFOLLOW
  path_filestat_get: { paths: [[0, 2, (a) => (a[1] & 1) !== 0]] },
  path_readlink: { paths: [[0, 1, () => false]] },
  path_create_directory: { paths: [[0, 1, () => false]], write: true },
  path_unlink_file: { paths: [[0, 1, () => false]], write: true },
  path_remove_directory: { paths: [[0, 1, () => false]], write: true },
  path_filestat_set_times: { paths: [[0, 2, (a) => (a[1] & 1) !== 0]], write: true },
  path_rename: { paths: [[0, 1, () => false], [3, 4, () => false]], write: true },
  path_link: { paths: [[0, 2, (a) => (a[1] & 1) !== 0], [4, 5, () => false]], write: true },
};

// uvwasi follows a final link itself, reading its text its own way (a
// relative target joined as text, an absolute one in the guest's names, a
// trailing slash kept), which is not what the kernel would do: a call that
// asks it to follow one is refused, and path_open never asks (the kernel
// follows the final link anyway, uvwasi passing no O_NOFOLLOW)
function followsALink(fd, rel) {
  const host = hostUnder(fd, rel);
  if (host === null) return false;
  try {
    return lstatSync(resolvePath(host)).isSymbolicLink();
  } catch {
    return false;
  }
}

// The checks every path call passes first; an errno to return, or 0.
function checkPaths(name, spec, a, writes) {
  const access = writes ? 'write' : 'read';
  for (const [fdArg, ptrArg, follow] of spec.paths) {
    const rp = readPath(a[ptrArg], a[ptrArg + 1]);
    if (rp.why)
      return refuse(name, under(a[fdArg], rp.shown ?? ''), access, E.INVAL,
                    `${rp.why}: not passed on`);
    const path = under(a[fdArg], rp.text);
    // a descriptor with no folder of the runner's (stdio, or unknown): uvwasi
    // would resolve its paths against the working folder
    if (!fds.get(a[fdArg])?.host)
      return refuse(name, path, access, E.NOTCAPABLE, 'not a folder of the module\'s preopens');
    if (rp.text.startsWith('/'))
      return refuse(name, path, access, E.NOTCAPABLE, 'an absolute path (preopens are opened ' +
                    'relative to their descriptor)');
    // uvwasi keeps a path in its descriptor's folder by comparing text
    // prefixes (".../d" also starts ".../dX"): a '..' that climbs out of
    // the descriptor's own folder is refused, whatever uvwasi makes of it
    const dd = fds.get(a[fdArg]);
    if (dd?.host && !within(resolvePath(`${dd.host}/${rp.text}`), resolvePath(dd.host)))
      return refuse(name, path, access, E.NOTCAPABLE,
                    "a '..' climbs out of its descriptor's folder");
    // a trailing slash makes the kernel follow a final link, whatever the flag
    const fol = follow(a) || rp.text.endsWith('/');
    if (writes && isRo(a[fdArg]))
      return refuse(name, path, 'write', E.ROFS, 'a read-only preopen (only read is granted)');
    if (leaves(a[fdArg], rp.text, fol, spec.write === true && name !== 'path_filestat_set_times'))
      return refuse(name, path, access, E.NOTCAPABLE,
                    'it leads out of the preopen (through a symlink node:wasi would follow, or ' +
                    'to the preopen\'s own folder, an entry of the folder above it)');
    if (name !== 'path_open' && name !== 'path_filestat_get' && fol &&
        followsALink(a[fdArg], rp.text))
      return refuse(name, path, access, E.NOTCAPABLE,
                    'asks the runtime to follow a final symlink, which it reads unlike the ' +
                    'kernel');
  }
  return 0;
}

// A stat that follows a final link: uvwasi would read the link's text
// itself, so the kernel follows it instead, through an open of the path
// (checked above, as every path is) and a stat of what was opened; the
// descriptor's number is kept in the stat's own buffer meanwhile
const FILESTAT_GET = 1n << 21n;
function statFollowing(orig, a) {
  const [dirfd, flags, ptr, len, buf] = a;
  const host = hostUnder(dirfd, readPath(ptr, len).text);
  if (!(flags & 1) || host === null || !followsALink(dirfd, readPath(ptr, len).text))
    return orig(...a);
  const r = pathOpen(dirfd, flags & ~1, ptr, len, 0, FILESTAT_GET, 0n, 0, buf);
  if (r !== 0) return r;
  const fd = view().getUint32(buf, true);
  const s = w.fd_filestat_get(fd, buf);
  fdClose(fd);
  return s;
}

for (const [name, spec] of Object.entries(PATH_CALLS)) {
  if (name === 'path_open') continue;
  const orig = w[name];
  w[name] = (...a) => {
    const e = checkPaths(name, spec, a, spec.write === true);
    if (e) return e;
    const last = spec.paths[spec.paths.length - 1];
    const rp = readPath(a[last[1]], a[last[1] + 1]);
    const r = name === 'path_filestat_get' ? statFollowing(orig, a) : orig(...a);
    return seen(name, under(a[last[0]], rp.text ?? ''), spec.write ? 'write' : 'read', r);
  };
}

// A module makes no symlink: node:wasi follows links out of a preopen, and
// one the module makes (s -> ".", then "s/s/../../usr") or moves into a
// place it opened is a way out that no check of a name can keep up with.
w.path_symlink = (oldPtr, oldLen, fd, ptr, len) => {
  const rp = readPath(ptr, len);
  return refuse('path_symlink', under(fd, rp.text ?? rp.shown ?? ''), 'write', E.PERM,
                'a WASM module may not make symlinks (node:wasi follows them out of its ' +
                'preopens)');
};

const pathOpen = w.path_open;
const fdClose = w.fd_close;
w.path_open = (dirfd, dirflags, ptr, len, oflags, base, inheriting, fdflags, out) => {
  const writes = (oflags & (O_CREAT | O_TRUNC)) !== 0 || (BigInt(base) & WRITE_RIGHTS) !== 0n ||
                 (fdflags & FD_APPEND) !== 0;
  const a = [dirfd, dirflags, ptr, len];
  const e = checkPaths('path_open', PATH_CALLS.path_open, a, writes);
  if (e) return e;
  const rel = readPath(ptr, len).text, path = under(dirfd, rel);
  // uvwasi is never asked to follow the final link (it would read the
  // link's text its own way); the kernel follows it, as leaves() reads it
  const r = pathOpen(dirfd, dirflags & ~1, ptr, len, oflags, base, inheriting, fdflags, out);
  if (r !== 0) return seen('path_open', path, writes ? 'write' : 'read', r);
  const fd = view().getUint32(out, true);
  // what was opened, checked again where it is now (fails closed)
  if (leaves(dirfd, rel, true)) {
    fdClose(fd);
    return refuse('path_open', path, writes ? 'write' : 'read', E.NOTCAPABLE,
                  'it was opened out of the preopen; the runner closed it');
  }
  const d = fds.get(dirfd), host = hostUnder(dirfd, rel);
  fds.set(fd, { path, ro: isRo(dirfd), host: host === null ? null : resolvePath(host),
                root: d?.root });
  return 0;
};

// uvwasi lists a folder by reopening its path: checked where it leads now
const fdReaddir = w.fd_readdir;
w.fd_readdir = (fd, ...rest) => {
  const d = fds.get(fd);
  if (d && d.host && leaves(fd, '.', true))
    return refuse('fd_readdir', d.path, 'read', E.NOTCAPABLE,
                  'the folder\'s path now leads out of the preopen');
  return fdReaddir(fd, ...rest);
};

for (const name of ['fd_allocate', 'fd_filestat_set_size', 'fd_filestat_set_times']) {
  const orig = w[name];
  w[name] = (fd, ...rest) => (isRo(fd) ? refuse(name, fds.get(fd).path, 'write', E.ROFS,
                                                'a read-only preopen (only read is granted)')
                                       : orig(fd, ...rest));
}
w.fd_close = (fd) => {
  const r = fdClose(fd);
  if (r === 0 && fd > 2) fds.delete(fd);
  return r;
};
const fdRenumber = w.fd_renumber;
w.fd_renumber = (from, to) => {
  const r = fdRenumber(from, to);
  if (r === 0) {
    const d = fds.get(from);
    fds.delete(from);
    if (d) fds.set(to, d); else fds.delete(to);
  }
  return r;
};

// proc_raise would let the module signal the runtime itself: SIGUSR1
// starts node's inspector, which runs any JavaScript it is sent
w.proc_raise = (sig) => {
  report({ t: 'denied', call: 'proc_raise', path: `signal ${sig}`, access: 'write',
           errno: E.NOSYS, layer: 'wasi', why: 'a module may not signal its runtime' });
  return E.NOSYS;
};

// random_seed: the module's random bytes come from SHA-256 over the seed
// and a counter, the same on every run
if (cfg.seed !== null && cfg.seed !== undefined) {
  let counter = 0n;
  w.random_get = (ptr, len) => {
    if (ptr + len > memory.buffer.byteLength) return E.FAULT;
    const out = new Uint8Array(memory.buffer, ptr, len);
    for (let off = 0; off < len; off += 32) {
      const h = createHash('sha256').update(`${cfg.seed}:${counter++}`).digest();
      out.set(h.subarray(0, Math.min(32, len - off)), off);
    }
    return 0;
  };
}

const limitPages = cfg.max_pages;
let instance;
try {
  const mod = await WebAssembly.compile(readModule(cfg.module, cfg.module_max));
  instance = await WebAssembly.instantiate(mod, imports);
} catch (e) {
  // V8's refusal of a memory past --wasm-max-mem-pages, and nothing else
  if (/Cannot allocate Wasm memory|implementation limit/.test(String(e.message))) {
    report({ t: 'limit', what: 'memory', layer: 'wasi', pages: limitPages,
             why: `the module asks for more memory than memory_mb grants: ${e.message}` });
    fail(`the module asks for more memory than memory_mb grants (${limitPages} pages)`, 137);
  }
  fail(`the module cannot be loaded: ${e.message}`, 126);
}
memory = instance.exports.memory;
if (!(memory instanceof WebAssembly.Memory)) fail('the module exports no memory', 126);

let code = 0;
try {
  code = wasi.start(instance);
} catch (e) {
  fail(`the module trapped: ${e.message}`, 134);
} finally {
  // it ended within 1 MiB of the cap: a grow past it failed, or would
  // have (a failed memory.grow is not seen from here)
  if (limitPages && memory.buffer.byteLength >= (limitPages - 16) * 65536)
    report({ t: 'limit', what: 'memory', layer: 'wasi', pages: limitPages,
             bytes: memory.buffer.byteLength,
             why: 'the module\'s memory ended within 1 MiB of the memory_mb cap, past which ' +
                  'growing fails' });
}
process.exitCode = code;
