// Test harness of the browser tests: builds and starts the local server,
// the scripted LLM and (for some tests) the fake GNS3 controller as their
// own processes, and drives Debian's Chromium through playwright-core.
import { spawn, execFile } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { createWriteStream, rmSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { connect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { chromium } from 'playwright-core';

export const root = dirname(dirname(dirname(fileURLToPath(import.meta.url))));
/** artifacts is where screenshots and logs go (gitignored). */
export const artifacts = join(root, 'web', 'test-results');
const chromiumPath = process.env.CHROMIUM || '/usr/bin/chromium';

const run = promisify(execFile);
const children = new Set();
process.on('exit', () => {
  for (const c of children) c.kill('SIGKILL');
});

let built;
/** build compiles the local server, the scripted LLM and the fake GNS3, once per process. */
function build() {
  built ??= (async () => {
    const dir = await mkdtemp(join(tmpdir(), 'agentchat-bin-'));
    process.on('exit', () => rmSync(dir, { recursive: true, force: true }));
    await compile(dir);
    return dir;
  })();
  return built;
}

async function compile(dir) {
  await Promise.all([
    run('go', ['build', '-o', join(dir, 'agentchat'), './functions/local'], { cwd: root, env: { ...process.env, CGO_ENABLED: '0' } }),
    run('go', ['build', '-o', join(dir, 'llm'), './internal/webui/webtest/llm'], { cwd: root, env: { ...process.env, CGO_ENABLED: '0' } }),
    run('go', ['build', '-o', join(dir, 'gns3'), './internal/webui/webtest/gns3'], { cwd: root, env: { ...process.env, CGO_ENABLED: '0' } }),
  ]);
}

/** start runs a program and resolves with the URL it prints once listening. */
function start(bin, args, env, logName, pattern) {
  return new Promise((resolve, reject) => {
    const child = spawn(bin, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    children.add(child);
    const log = createWriteStream(join(artifacts, logName));
    child.stderr.pipe(log);
    let out = '';
    const timer = setTimeout(() => reject(new Error(`${bin} did not start in time:\n${out}`)), 30_000);
    child.stdout.on('data', (b) => {
      out += b;
      log.write(b);
      const m = pattern.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve({ url: m[1], stop: () => stop(child) });
      }
    });
    child.on('exit', (code) => {
      children.delete(child);
      clearTimeout(timer);
      reject(new Error(`${bin} exited with ${code}:\n${out}`));
    });
  });
}

function stop(child) {
  if (child.exitCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', resolve);
    child.kill('SIGTERM');
    setTimeout(() => child.kill('SIGKILL'), 5_000).unref();
  });
}

/** baseEnv is a clean environment: no GNS3_URL, JWT_SECRET… from outside. */
function baseEnv(extra) {
  const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/tmp', TMPDIR: tmpdir() };
  return { ...env, ...extra };
}

/**
 * Lab is a running local server (SQLite in a temporary folder) in front
 * of the scripted LLM, and a browser. With gns3, the server has a
 * GNS3_URL: the fake controller of internal/webui/webtest/gns3.
 */
export class Lab {
  static async start({ jwtSecret = '', name = 'server', gns3 = false } = {}) {
    await mkdir(artifacts, { recursive: true });
    const lab = new Lab();
    lab.dir = await mkdtemp(join(tmpdir(), 'agentchat-browser-'));
    const bin = await build();
    lab.llm = await start(join(bin, 'llm'), ['-addr', '127.0.0.1:0'], baseEnv({}), `${name}-llm.log`, /listening on (http:\/\/\S+)/);
    if (gns3) lab.gns3 = await start(join(bin, 'gns3'), [], baseEnv({}), `${name}-gns3.log`, /listening on (http:\/\/\S+)/);
    const env = {
      ADDR: '127.0.0.1:0',
      DATA_DIR: join(lab.dir, 'data'),
      OPENAI_BASE_URL: `${lab.llm.url}/v1`,
      OPENAI_API_KEY: 'sk-browser-test',
      OPENAI_MODEL: 'scripted',
      HEARTBEAT_SECONDS: '1',
      LOG_LEVEL: 'warn',
    };
    if (jwtSecret) env.JWT_SECRET = jwtSecret;
    if (lab.gns3) env.GNS3_URL = lab.gns3.url;
    lab.server = await start(join(bin, 'agentchat'), [], baseEnv(env), `${name}.log`, /agentchat listening on (http:\/\/\S+)/);
    lab.url = lab.server.url;
    lab.context = await chromium.launchPersistentContext(join(lab.dir, 'profile'), {
      executablePath: chromiumPath,
      headless: true,
      viewport: { width: 1280, height: 860 },
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
        '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    });
    return lab;
  }

  /**
   * page opens the console at path in a new tab that records console
   * errors, page errors and requests to anything but this server (or
   * base: a Cutter in front of it).
   */
  async page(path = '/', { viewport, allowConsole = [], base = this.url } = {}) {
    const page = await this.context.newPage();
    if (viewport) await page.setViewportSize(viewport);
    page.problems = [];
    page.allowConsole = allowConsole;
    page.on('console', (m) => {
      if (m.type() === 'error' && !page.allowConsole.some((re) => re.test(m.text()))) page.problems.push(`console error: ${m.text()}`);
    });
    page.on('pageerror', (e) => page.problems.push(`page error: ${e.message}`));
    page.on('request', (r) => {
      const u = r.url();
      if (!u.startsWith(`${base}/`) && !u.startsWith('data:')) page.problems.push(`request to elsewhere: ${u}`);
    });
    page.on('dialog', (d) => {
      page.problems.push(`native dialog: ${d.message()}`);
      void d.dismiss();
    });
    await page.goto(base + path);
    await page.waitForSelector('#app:not([hidden])');
    return page;
  }

  /** api calls the server as the page does (single-user mode). */
  async api(method, path, body, token = '') {
    const headers = { 'Content-Type': 'application/json' };
    if (token) headers.Authorization = `Bearer ${token}`;
    const res = await fetch(this.url + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    const text = await res.text();
    if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text}`);
    return { res, body: text ? JSON.parse(text) : null };
  }

  async close() {
    await this.context?.close().catch(() => {});
    await Promise.all([this.server?.stop(), this.llm?.stop(), this.gns3?.stop()]);
    if (this.dir) await rm(this.dir, { recursive: true, force: true });
  }
}

/**
 * Cutter is a TCP proxy in front of a server that a test controls, to drop
 * the network under the page: cut() resets every open connection (the
 * browser's requests fail mid-stream, the server sees its client leave),
 * and while hold(true) new connections are reset as soon as they come
 * (refused counts them) until hold(false).
 */
export class Cutter {
  static async start(target) {
    const c = new Cutter();
    const { hostname, port } = new URL(target);
    c.sockets = new Set();
    c.holding = false;
    c.refused = 0;
    c.server = createServer((client) => {
      if (c.holding) {
        c.refused++;
        client.resetAndDestroy();
        return;
      }
      const upstream = connect(Number(port), hostname);
      for (const [a, b] of [[client, upstream], [upstream, client]]) {
        c.sockets.add(a);
        a.on('error', () => b.destroy());
        a.on('close', () => {
          c.sockets.delete(a);
          b.destroy();
        });
        a.pipe(b);
      }
    });
    await new Promise((resolve) => c.server.listen(0, '127.0.0.1', resolve));
    c.url = `http://127.0.0.1:${c.server.address().port}`;
    return c;
  }

  /** cut resets every open connection. */
  cut() {
    for (const s of this.sockets) {
      if (s.connecting || s.destroyed) s.destroy();
      else s.resetAndDestroy();
    }
  }

  hold(on) {
    this.holding = on;
  }

  close() {
    this.cut();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

/** screenshot saves a picture of the page into the artifacts. */
export async function screenshot(page, name) {
  await page.screenshot({ path: join(artifacts, `${name}.png`), fullPage: false });
}

/** jwt issues an HS256 token for sub. */
export function jwt(secret, sub, ttlSeconds = 3600) {
  const b64 = (v) => Buffer.from(JSON.stringify(v)).toString('base64url');
  const head = `${b64({ alg: 'HS256', typ: 'JWT' })}.${b64({ sub, exp: Math.floor(Date.now() / 1000) + ttlSeconds, iat: Math.floor(Date.now() / 1000) })}`;
  return `${head}.${createHmac('sha256', secret).update(head).digest('base64url')}`;
}
