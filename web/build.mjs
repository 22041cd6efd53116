// Builds the web console into internal/webui/dist (committed, embedded by
// the Go binary), deterministically: same sources and esbuild, same bytes.
//
//   node web/build.mjs            build into internal/webui/dist
//   node web/build.mjs --check    build into a temporary folder and fail
//                                 when internal/webui/dist differs
import * as esbuild from 'esbuild';
import { mkdtemp, mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const web = dirname(fileURLToPath(import.meta.url));
const root = dirname(web);
const dist = join(root, 'internal', 'webui', 'dist');

/** build writes the bundle, its stylesheet and index.html into out. */
async function build(out) {
  await rm(out, { recursive: true, force: true });
  await mkdir(out, { recursive: true });
  const result = await esbuild.build({
    absWorkingDir: root,
    entryPoints: { app: 'web/src/main.ts' },
    outdir: out,
    entryNames: '[name]-[hash]',
    bundle: true,
    minify: true,
    format: 'iife',
    target: ['es2022', 'chrome110', 'firefox115', 'safari16'],
    charset: 'utf8',
    legalComments: 'none', // LICENSES.txt has them whole
    sourcemap: false,
    metafile: true,
    logLevel: 'warning',
  });
  const outputs = Object.keys(result.metafile.outputs).map((p) => basename(p));
  const js = outputs.find((f) => f.endsWith('.js'));
  const css = outputs.find((f) => f.endsWith('.css'));
  if (!js || !css) throw new Error(`esbuild produced ${outputs.join(', ')}: want one .js and one .css`);
  const html = (await readFile(join(web, 'index.html'), 'utf8')).replace('{{APP_JS}}', js).replace('{{APP_CSS}}', css);
  if (html.includes('{{')) throw new Error('web/index.html: unknown placeholder');
  await writeFile(join(out, 'index.html'), html);
  // The licenses of the bundled packages, from their own LICENSE files.
  const packages = new Set();
  for (const input of Object.keys(result.metafile.inputs)) {
    const m = /^node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(input);
    if (m) packages.add(m[1]);
  }
  const legal = [];
  for (const pkg of [...packages].sort()) {
    const dir = join(root, 'node_modules', pkg);
    const meta = JSON.parse(await readFile(join(dir, 'package.json'), 'utf8'));
    const file = (await readdir(dir)).sort().find((f) => /^(licen[cs]e|copying)/i.test(f));
    const text = file ? (await readFile(join(dir, file), 'utf8')).trim() : `License: ${meta.license}`;
    legal.push(`${pkg} ${meta.version}\n${'='.repeat(pkg.length + meta.version.length + 1)}\n\n${text}\n`);
  }
  await writeFile(join(out, 'LICENSES.txt'), legal.join('\n'));
}

async function files(dir) {
  const out = new Map();
  for (const f of (await readdir(dir)).sort()) out.set(f, await readFile(join(dir, f)));
  return out;
}

if (process.argv.includes('--check')) {
  const tmp = await mkdtemp(join(tmpdir(), 'agentchat-web-'));
  try {
    await build(tmp);
    const want = await files(tmp);
    let got;
    try {
      got = await files(dist);
    } catch {
      got = new Map();
    }
    const problems = [];
    for (const [f, b] of want) {
      if (!got.has(f)) problems.push(`missing ${f}`);
      else if (!got.get(f).equals(b)) problems.push(`${f} differs`);
    }
    for (const f of got.keys()) if (!want.has(f)) problems.push(`stale ${f}`);
    if (problems.length) {
      console.error(`${relative(root, dist)} does not match web/: ${problems.join(', ')}.\nRun \`make web\` and commit the result.`);
      process.exit(1);
    }
    console.log(`${relative(root, dist)} matches web/ (${want.size} files)`);
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
} else {
  await build(dist);
  for (const [f, b] of await files(dist)) console.log(`${relative(root, join(dist, f))}  ${b.length} bytes`);
}
