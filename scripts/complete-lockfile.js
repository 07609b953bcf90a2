#!/usr/bin/env node
// The npm registry reachable here serves only the native packages of this platform, so `npm install`
// leaves the other platforms' optional binaries (@swc/core-darwin-arm64, ...) out of package-lock.json
// and `npm ci` then refuses the lock as "out of sync". This adds the missing entries with their
// os/cpu/libc, which makes `npm ci` accept the lock and skip them as foreign platforms.
// Run after every `npm install` that changes the lock: `node scripts/complete-lockfile.js`.
const fs = require('node:fs');
const path = require('node:path');

const lockPath = path.join(__dirname, '..', 'package-lock.json');
const lock = JSON.parse(fs.readFileSync(lockPath, 'utf8'));
const OS = ['darwin', 'linux', 'win32', 'android', 'freebsd', 'openharmony', 'sunos', 'aix', 'netbsd', 'openbsd'];
const CPU = ['arm64', 'x64', 'ia32', 'arm', 'ppc64', 'ppc64le', 's390x', 'riscv64', 'loong64', 'wasm32', 'mips64el'];

function platformOf(name) {
  const tokens = name.split('/').pop().split('-');
  const os = tokens.find((t) => OS.includes(t));
  const cpu = tokens.find((t) => CPU.includes(t));
  const libc = tokens.some((t) => t.startsWith('musl')) ? 'musl' : tokens.some((t) => t.startsWith('gnu')) ? 'glibc' : null;
  return { os, cpu, libc };
}

let added = 0;
for (const [location, entry] of Object.entries(lock.packages)) {
  for (const [name, version] of Object.entries(entry.optionalDependencies ?? {})) {
    const base = location === '' ? 'node_modules' : `${location.replace(/\/node_modules\/[^/]+(\/[^/]+)?$/, '')}`;
    const candidates = [`${location}/node_modules/${name}`, `${base === '' ? 'node_modules' : base}/${name}`, `node_modules/${name}`];
    if (candidates.some((key) => lock.packages[key])) continue;
    const { os, cpu, libc } = platformOf(name);
    if (!os && !cpu) continue; // not a platform binary: leave it to npm
    const added_entry = { version, optional: true };
    if (entry.dev) added_entry.dev = true;
    if (os) added_entry.os = [os];
    if (cpu) added_entry.cpu = [cpu];
    if (libc) added_entry.libc = [libc];
    lock.packages[`node_modules/${name}`] = added_entry;
    added++;
  }
}
lock.packages = Object.fromEntries(Object.entries(lock.packages).sort(([a], [b]) => (a === '' ? -1 : b === '' ? 1 : a.localeCompare(b))));
fs.writeFileSync(lockPath, `${JSON.stringify(lock, null, 2)}\n`);
console.log(`complete-lockfile: added ${added} foreign-platform entries`);
