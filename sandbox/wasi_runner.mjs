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
import { closeSync, fstatSync, openSync, readFileSync, readSync, realpathSync,
         writeSync } from 'node:fs';
import { createHash } from 'node:crypto';

const REPORT_FD = 3, CONFIG_FD = 4;
const TEXT_MAX = 1024; // bytes of a path or message in a report (the broker's line: 4096)
const E = { ACCES: 2, FAULT: 21, NOSYS: 52, NOTCAPABLE: 76, PERM: 63, ROFS: 69 };
// rights that change a file's contents (wasi-libc asks them for O_WRONLY/O_RDWR)
const WRITE_RIGHTS = (1n << 0n) | (1n << 6n) | (1n << 8n) | (1n << 22n);
const O_CREAT = 1, O_TRUNC = 8, FD_APPEND = 1;

// A string the broker can take whole: NULs shown, at most TEXT_MAX bytes,
// a longer one cut in its middle at characters' boundaries (its end names
// what was reached) and said, never dropped.
function text(s, o) {
  const b = Buffer.from(String(s).replaceAll('\0', '\\0'), 'utf8');
  if (b.length <= TEXT_MAX) return b.toString('utf8');
  const half = (TEXT_MAX - 8) >> 1;
  let head = half, tail = b.length - half;
  while (head > 0 && (b[head] & 0xc0) === 0x80) head--;
  while (tail < b.length && (b[tail] & 0xc0) === 0x80) tail++;
  o.cut = true;
  return `${b.subarray(0, head).toString('utf8')} [...] ${b.subarray(tail).toString('utf8')}`;
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

function realRoot(host) {
  try { return realpathSync(host); } catch { return host; }
}

let memory = null;
const view = () => new DataView(memory.buffer);
function str(ptr, len) {
  try {
    return Buffer.from(memory.buffer, ptr, Math.min(len, 4096)).toString('utf8');
  } catch {
    return '';
  }
}
const under = (fd, rel) => {
  const d = fds.get(fd);
  return d ? (rel.startsWith('/') ? rel : `${d.path}/${rel}`) : rel;
};
const hostUnder = (fd, rel) => {
  const d = fds.get(fd);
  return d && !rel.startsWith('/') ? `${d.host}/${rel}` : null;
};
const within = (p, root) => p === root || p.startsWith(root === '/' ? '/' : `${root}/`);

// What node:wasi opened, where it really is: out of its preopen (through a
// symlink, which node:wasi follows) it is closed again. The module is
// single-threaded and nothing else in the sandbox writes its folders, so
// the path resolves now as it did for the open.
function escaped(dirfd, rel, follow) {
  const d = fds.get(dirfd), host = hostUnder(dirfd, rel);
  if (!d || host === null) return false;
  try {
    let real;
    if (follow) {
      real = realpathSync(host);
    } else {
      const slash = host.lastIndexOf('/');
      real = `${realpathSync(host.slice(0, slash) || '/')}/${host.slice(slash + 1)}`;
    }
    return !within(real, d.root);
  } catch {
    return false; // gone already: nothing was opened through it
  }
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
function readOnly(call, path) {
  report({ t: 'denied', call, path, access: 'write', errno: E.ROFS, layer: 'wasi',
           why: 'a read-only preopen (only read is granted)' });
  return E.ROFS;
}
const isRo = (fd) => fds.get(fd)?.ro === true;

const pathOpen = w.path_open;
const fdClose = w.fd_close;
w.path_open = (dirfd, dirflags, ptr, len, oflags, base, inheriting, fdflags, out) => {
  const path = under(dirfd, str(ptr, len));
  const writes = (oflags & (O_CREAT | O_TRUNC)) !== 0 || (BigInt(base) & WRITE_RIGHTS) !== 0n ||
                 (fdflags & FD_APPEND) !== 0;
  if (writes && isRo(dirfd)) return readOnly('path_open', path);
  const rel = str(ptr, len);
  const r = pathOpen(dirfd, dirflags, ptr, len, oflags, base, inheriting, fdflags, out);
  if (r !== 0) return seen('path_open', path, writes ? 'write' : 'read', r);
  const fd = view().getUint32(out, true);
  if (escaped(dirfd, rel, (dirflags & 1) !== 0)) {
    fdClose(fd);
    report({ t: 'denied', call: 'path_open', path, access: writes ? 'write' : 'read',
             errno: E.NOTCAPABLE, layer: 'wasi',
             why: 'a symlink led out of the preopen; the kernel let it through, the runner ' +
                  'closed it' });
    return E.NOTCAPABLE;
  }
  const d = fds.get(dirfd);
  fds.set(fd, { path, ro: isRo(dirfd), host: hostUnder(dirfd, rel), root: d?.root });
  return 0;
};

// the calls that change a folder: refused in a read-only one
for (const [name, fdArg, pathArgs] of [
  ['path_create_directory', 0, [1]], ['path_unlink_file', 0, [1]],
  ['path_remove_directory', 0, [1]], ['path_filestat_set_times', 0, [2]],
  ['path_symlink', 2, [3]], ['path_rename', 0, [1, 4]], ['path_link', 0, [2, 5]],
]) {
  const orig = w[name];
  w[name] = (...a) => {
    // rename and link name two folders: each must be writable
    const dirs = name === 'path_rename' ? [a[0], a[3]] : name === 'path_link' ? [a[0], a[4]]
                                                                                : [a[fdArg]];
    const path = under(dirs[dirs.length - 1], str(a[pathArgs[pathArgs.length - 1]],
                                                  a[pathArgs[pathArgs.length - 1] + 1]));
    if (dirs.some(isRo)) return readOnly(name, path);
    return seen(name, path, 'write', orig(...a));
  };
}
for (const name of ['fd_allocate', 'fd_filestat_set_size', 'fd_filestat_set_times']) {
  const orig = w[name];
  w[name] = (fd, ...a) => (isRo(fd) ? readOnly(name, fds.get(fd).path) : orig(fd, ...a));
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
  if (/memory/i.test(String(e.message))) {
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
  // it grew its memory to the cap: the runtime's limit is what stopped it
  if (limitPages && memory.buffer.byteLength >= (limitPages - 16) * 65536)
    report({ t: 'limit', what: 'memory', layer: 'wasi', pages: limitPages,
             bytes: memory.buffer.byteLength,
             why: 'the module grew its memory to the memory_mb cap; growing past it fails' });
}
process.exitCode = code;
