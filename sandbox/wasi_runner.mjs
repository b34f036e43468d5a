// skillgate's WASI layer: runs one WASI preview-1 module under Node.js's
// node:wasi, inside the kernel sandbox (sandbox/wasm.c builds the plan and
// passes this file to `node --eval`). It gives the module only what the
// policy grants: the preopened folders (read-only ones refused any write
// here, since node:wasi has no read-only preopen), the allowed environment,
// its arguments and SKILL_INPUT, a seeded random_get when the manifest asks.
//
// node:wasi is not a sandbox by itself (Node's documentation says so, and
// it follows a preopen's symlinks out of it): the kernel sandbox around
// this process is what holds then. Each refusal is reported on fd 3, a pipe
// to the broker that the module cannot reach (WASI descriptors are the
// runtime's own table), with the layer that held: "wasi" when this process
// refused it, "kernel" when the call reached the kernel and was refused.
//
// The configuration comes in the environment (SG_WASI, JSON), never in
// argv: argv is readable by every user of the host, and it holds the
// module's environment.
import { WASI } from 'node:wasi';
import { closeSync, fstatSync, openSync, readSync, writeSync } from 'node:fs';
import { createHash } from 'node:crypto';

const REPORT_FD = 3;
const REPORT_MAX = 4000; // bytes of a report line; the broker caps it too
const E = { ACCES: 2, FAULT: 21, NOTCAPABLE: 76, PERM: 63, ROFS: 69 };
// rights that change a file's contents (wasi-libc asks them for O_WRONLY/O_RDWR)
const WRITE_RIGHTS = (1n << 0n) | (1n << 6n) | (1n << 8n) | (1n << 22n);
const O_CREAT = 1, O_TRUNC = 8, FD_APPEND = 1;

function report(o) {
  let line = JSON.stringify(o);
  if (line.length > REPORT_MAX) {
    o.path = String(o.path ?? '').slice(0, 512);
    o.cut = true;
    line = JSON.stringify(o);
  }
  try { writeSync(REPORT_FD, line + '\n'); } catch { /* run outside skillgate */ }
}

function fail(msg, code) {
  try { writeSync(2, `skillgate (WASI layer): ${msg}\n`); } catch { /* stderr gone */ }
  process.exit(code);
}

const major = Number(process.versions.node.split('.')[0]);
if (!(major >= 20))
  fail(`Node.js ${process.versions.node} is too old: WASM skills need node:wasi with ` +
       'preview1, Node.js 20 or later (Debian package nodejs)', 127);

const cfg = JSON.parse(process.env.SG_WASI ?? 'null');
delete process.env.SG_WASI;
if (!cfg || typeof cfg.module !== 'string') fail('no configuration (SG_WASI)', 127);
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
cfg.preopens.forEach((p, i) => fds.set(3 + i, { path: p.guest, ro: !p.write }));

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

const imports = wasi.getImportObject();
const w = imports.wasi_snapshot_preview1;

// A refusal the call came back with: who held it.
function seen(call, path, access, errno) {
  if (errno === E.NOTCAPABLE)
    report({ t: 'denied', call, path, access, errno, layer: 'wasi',
             why: 'outside the preopened folders' });
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
w.path_open = (dirfd, dirflags, ptr, len, oflags, base, inheriting, fdflags, out) => {
  const path = under(dirfd, str(ptr, len));
  const writes = (oflags & (O_CREAT | O_TRUNC)) !== 0 || (BigInt(base) & WRITE_RIGHTS) !== 0n ||
                 (fdflags & FD_APPEND) !== 0;
  if (writes && isRo(dirfd)) return readOnly('path_open', path);
  const r = pathOpen(dirfd, dirflags, ptr, len, oflags, base, inheriting, fdflags, out);
  if (r !== 0) return seen('path_open', path, writes ? 'write' : 'read', r);
  fds.set(view().getUint32(out, true), { path, ro: isRo(dirfd) });
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
const fdClose = w.fd_close;
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
