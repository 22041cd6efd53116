// The web console in a real browser (Debian's Chromium through
// playwright-core) against the local server and the scripted LLM
// (internal/webui/webtest/llm), each its own process, and for the project
// list the fake GNS3 controller (internal/webui/webtest/gns3). Screenshots
// go to web/test-results/.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { Cutter, Lab, jwt, screenshot } from './harness.mjs';

const T = { timeout: 90_000 };

/** clean asserts that the page made no console error and no outside request. */
function clean(page) {
  assert.deepEqual(page.problems, [], 'the page logged errors or asked another host');
}

/** sessions lists a project's sessions through the API. */
async function sessions(lab, project) {
  return (await lab.api('GET', `/v3/projects/${project}/chat/sessions?limit=100`)).body;
}

/** chat runs one quick turn through the API (no browser). */
async function chat(lab, project, message) {
  const id = randomUUID();
  await lab.api('POST', `/v3/projects/${project}/chat/stream`, { message, session_id: id, stream: false });
  return id;
}

async function send(page, text) {
  await page.fill('#input', text);
  await page.press('#input', 'Enter');
}

/** finished waits for the last assistant turn to end. */
async function finished(page, timeout = 30_000) {
  await page.waitForSelector('.msg.assistant:last-child.finished', { timeout });
  await page.waitForSelector('#send:not([hidden])');
}

/**
 * record starts recording, at every DOM change under #messages, the text
 * length of what selector matches last, with the time; stop with
 * recorded().
 */
async function record(page, selector) {
  await page.evaluate((sel) => {
    const marks = [];
    window.__marks = marks;
    const mo = new MutationObserver(() => {
      const els = document.querySelectorAll(sel);
      const el = els[els.length - 1];
      const n = el ? el.textContent.length : 0;
      if (marks.length === 0 || marks[marks.length - 1].n !== n) marks.push({ n, t: performance.now() });
    });
    mo.observe(document.getElementById('messages'), { subtree: true, childList: true, characterData: true });
    window.__stopMarks = () => mo.disconnect();
  }, selector);
}

/** longAnswer is the scripted LLM's long answer (longAnswer in internal/webui/webtest/llm). */
const longAnswer = `Long answer:${Array.from({ length: 160 }, (_, i) => ` w${i + 1}`).join('')} end.`;

/** grown waits until the last text of the last answer shows word n of the long answer. */
async function grown(page, n) {
  await page.waitForFunction((w) => {
    const els = document.querySelectorAll('.msg.assistant .md');
    return els.length > 0 && els[els.length - 1].textContent.includes(w);
  }, ` w${n} `, { timeout: 30_000 });
}

/** texts lists the text blocks of the page's answers. */
function texts(page) {
  return page.$$eval('.msg.assistant .md', (els) => els.map((e) => e.textContent.trim()));
}

/** until waits for cond() to hold, polling (no timed assertion: the test's timeout bounds it). */
async function until(cond) {
  while (!cond()) await new Promise((resolve) => setTimeout(resolve, 20));
}

/** sessionOf is the session id in the page's URL. */
function sessionOf(page) {
  const id = /#session=([0-9a-f-]{36})$/.exec(page.url())?.[1];
  assert.ok(id, `the URL names the session: ${page.url()}`);
  return id;
}

async function recorded(page) {
  return page.evaluate(() => {
    window.__stopMarks();
    return window.__marks.filter((m) => m.n > 0);
  });
}

describe('web console, single-user mode', () => {
  let lab;
  before(async () => {
    lab = await Lab.start();
  });
  after(async () => {
    await lab?.close();
  });

  test('GET / is the console and it loads nothing from elsewhere', T, async () => {
    const page = await lab.page('/?project=first-look');
    assert.equal(await page.title(), 'agentchat');
    assert.equal(await page.inputValue('#project'), 'first-look');
    await page.waitForSelector('#sessions-empty:not([hidden])');
    assert.match(await page.textContent('#messages'), /New conversation/);
    // Without GNS3_URL there is no project list (204): the free-text field alone.
    await page.waitForFunction(() => performance.getEntriesByType('resource').some((e) => e.name.endsWith('/v3/copilot/projects')));
    assert.equal(await page.isVisible('#project-picker'), false);
    clean(page);
    await page.close();
  });

  test('an answer streams token by token as sanitized Markdown', T, async () => {
    const page = await lab.page('/?project=stream-test');
    await record(page, '.msg.assistant .md');
    await send(page, 'What is in my lab?');
    // The user's message shows at once, the answer grows while it streams.
    await page.waitForSelector('.msg.user >> text=What is in my lab?');
    await page.waitForSelector('#stop:not([hidden])');
    await finished(page);
    const marks = await recorded(page);
    assert.ok(marks.length >= 10, `the answer arrived in ${marks.length} steps, want many`);
    for (let i = 1; i < marks.length; i++) assert.ok(marks[i].n > marks[i - 1].n, 'the text only grows');
    assert.ok(marks[marks.length - 1].t - marks[0].t > 500, 'the steps are spread over time');

    const md = page.locator('.msg.assistant .md').last();
    assert.equal(await md.locator('h2').textContent(), 'Your lab');
    assert.equal(await md.locator('strong').first().textContent(), 'copilot');
    assert.equal(await md.locator('li').count(), 2);
    assert.match(await md.locator('pre code').textContent(), /show ip interface brief/);
    assert.equal(await md.locator('table td').first().textContent(), 'R1');
    // HTML of the model is text; images are links; scripts never run.
    assert.equal(await md.locator('img').count(), 0);
    assert.match(await md.textContent(), /<img src=x onerror=/);
    assert.equal(await page.evaluate(() => window.__xss), undefined);
    assert.equal(await md.locator('a[href^="javascript"]').count(), 0);
    assert.equal(await md.locator('a', { hasText: 'remote image' }).getAttribute('href'), 'http://203.0.113.9/pixel.png');
    const docs = md.locator('a', { hasText: 'docs' });
    assert.equal(await docs.getAttribute('target'), '_blank');
    assert.equal(await docs.getAttribute('rel'), 'noopener noreferrer');

    // The session is listed, with its generated title, and its statistics.
    const id = /#session=([0-9a-f-]{36})$/.exec(page.url())?.[1];
    assert.ok(id, `the URL names the session: ${page.url()}`);
    await page.waitForSelector(`.session.current[data-id="${id}"] >> text=Chat about What is in`);
    await page.waitForFunction(() => document.querySelector('[data-stat="LLM calls"]')?.textContent !== '0');
    assert.equal(await page.textContent('[data-stat="Messages"]'), '2');
    assert.notEqual(await page.textContent('[data-stat="Total tokens"]'), '0');
    await screenshot(page, 'desktop-answer');
    clean(page);
    await page.close();
  });

  test('Enter sends, Shift+Enter makes a new line', T, async () => {
    const page = await lab.page('/?project=keyboard');
    await page.click('#input');
    await page.keyboard.type('quick line one');
    await page.keyboard.press('Shift+Enter');
    await page.keyboard.type('line two');
    assert.equal(await page.inputValue('#input'), 'quick line one\nline two');
    assert.equal(await page.locator('.msg.user').count(), 0);
    await page.keyboard.press('Enter');
    await finished(page);
    assert.equal(await page.locator('.msg.user').innerText(), 'quick line one\nline two');
    assert.equal(await page.inputValue('#input'), '');
    assert.match(await page.textContent('.msg.assistant'), /Quick answer\./);
    clean(page);
    await page.close();
  });

  test('a tool call is a card that fills in, and history shows it again after a reload', T, async () => {
    const page = await lab.page('/?project=tool-test');
    await record(page, '.tool .tool-args');
    await send(page, 'Please use a tool to add two PCs');
    const card = page.locator('.tool[data-tool-name="create_gns3_node"]');
    await card.waitFor();
    await page.waitForSelector('.tool[data-status="failed"]', { timeout: 30_000 });
    const marks = await recorded(page);
    assert.ok(marks.length >= 4, `the arguments grew in ${marks.length} steps, want several`);
    await finished(page);
    // Arguments pretty-printed, output behind a summary, status shown.
    assert.match(await card.locator('.tool-args').textContent(), /"name": "PC1"/);
    assert.equal(await card.locator('.tool-status').textContent(), 'failed');
    const output = card.locator('.tool-output');
    assert.equal(await output.isVisible(), false, 'the output is folded');
    assert.match(await card.locator('.tool-section summary', { hasText: 'Output' }).textContent(), /GNS3 is not configured/);
    await card.locator('summary', { hasText: 'Output' }).click();
    assert.equal(await output.isVisible(), true);
    assert.match(await output.textContent(), /GNS3 is not configured/);
    // Text before the card, the closing answer after it.
    const order = await page.$$eval('.msg.assistant .msg-body > *', (els) => els.map((e) => e.className));
    assert.deepEqual(order, ['md', 'tool', 'md']);
    assert.match(await page.locator('.msg.assistant .md').last().textContent(), /The tool answered/);
    await page.waitForSelector('[data-tool="create_gns3_node"] >> text=× 1');
    await screenshot(page, 'desktop-tool');

    // Reload: the same session, rendered from its history.
    const url = page.url();
    await page.reload();
    await page.waitForSelector('.tool[data-tool-name="create_gns3_node"][data-status="failed"]');
    assert.equal(page.url(), url);
    assert.equal(await page.locator('.msg.user').textContent(), 'Please use a tool to add two PCs');
    const again = page.locator('.tool[data-tool-name="create_gns3_node"]');
    assert.match(await again.locator('.tool-args').textContent(), /"template": "VPCS"/);
    assert.match(await again.locator('.tool-output').textContent(), /GNS3 is not configured/);
    assert.match(await page.locator('.msg.assistant .md').first().textContent(), /Let me add two nodes/);
    assert.match(await page.locator('.msg.assistant .md').last().textContent(), /The tool answered/);
    await page.waitForSelector('.session.current');

    // Opened from the sidebar too.
    await page.goto(`${lab.url}/?project=tool-test`);
    await page.waitForSelector('.session');
    await page.click('.session .session-open');
    await page.waitForSelector('.tool[data-tool-name="create_gns3_node"][data-status="failed"]');
    assert.equal(page.url(), url);
    clean(page);
    await page.close();
  });

  test('rename inline, pin and unpin, delete with a confirmation', T, async () => {
    const project = 'manage';
    const alpha = await chat(lab, project, 'quick alpha');
    const beta = await chat(lab, project, 'quick beta');
    const gamma = await chat(lab, project, 'quick gamma');
    const page = await lab.page(`/?project=${project}`);
    const ids = () => page.$$eval('.session', (els) => els.map((e) => e.dataset.id));
    await page.waitForSelector('.session >> nth=2');
    assert.deepEqual(await ids(), [gamma, beta, alpha], 'most recent first');

    // Rename: Escape keeps the title, Enter saves.
    const row = (id) => page.locator(`.session[data-id="${id}"]`);
    await row(alpha).locator('.rename').click();
    await page.fill('.rename-input', 'Not this');
    await page.press('.rename-input', 'Escape');
    await row(alpha).locator('.session-title').waitFor();
    assert.equal(await row(alpha).locator('.session-title').textContent(), 'Chat about quick alpha');
    await row(alpha).locator('.rename').click();
    await page.fill('.rename-input', 'OSPF lab');
    await page.press('.rename-input', 'Enter');
    await page.waitForSelector(`.session[data-id="${alpha}"] >> text=OSPF lab`);
    assert.equal((await sessions(lab, project)).find((s) => s.thread_id === alpha).title, 'OSPF lab');

    // Pin: first in the list, also after a reload.
    await row(alpha).locator('.pin').click();
    await page.waitForSelector(`.session.pinned[data-id="${alpha}"]`);
    assert.deepEqual(await ids(), [alpha, gamma, beta]);
    assert.equal((await sessions(lab, project))[0].thread_id, alpha);
    await page.reload();
    await page.waitForSelector(`.session.pinned[data-id="${alpha}"]`);
    assert.deepEqual(await ids(), [alpha, gamma, beta]);
    await row(alpha).locator('.pin').click();
    await page.waitForSelector(`.session[data-id="${alpha}"]:not(.pinned)`);
    assert.equal((await sessions(lab, project)).find((s) => s.thread_id === alpha).pinned, false);

    // Delete: cancel keeps it, confirm removes it.
    await row(beta).locator('.delete').click();
    await page.waitForSelector('#confirm-dialog[open]');
    assert.match(await page.textContent('#confirm-message'), /Chat about quick beta/);
    await page.click('#confirm-dialog button[value="cancel"]');
    await page.waitForSelector('#confirm-dialog', { state: 'hidden' });
    assert.equal(await row(beta).count(), 1);
    await row(beta).locator('.delete').click();
    await page.click('#confirm-ok');
    await row(beta).waitFor({ state: 'detached' });
    const left = (await sessions(lab, project)).map((s) => s.thread_id).sort();
    assert.deepEqual(left, [alpha, gamma].sort());
    await screenshot(page, 'desktop-sidebar');
    clean(page);
    await page.close();
  });

  test('the sidebar pages with X-Next-Cursor', T, async () => {
    const project = 'many';
    for (let i = 0; i < 25; i += 5) {
      await Promise.all([0, 1, 2, 3, 4].map((k) => chat(lab, project, `quick number ${i + k}`)));
    }
    const page = await lab.page(`/?project=${project}`);
    await page.waitForSelector('#load-more:not([hidden])');
    assert.equal(await page.locator('.session').count(), 20);
    await page.click('#load-more');
    await page.waitForSelector('#load-more[hidden]', { state: 'attached' });
    assert.equal(await page.locator('.session').count(), 25);
    const ids = await page.$$eval('.session', (els) => els.map((e) => e.dataset.id));
    assert.equal(new Set(ids).size, 25);
    clean(page);
    await page.close();
  });

  test('stop ends a slow answer, after "still working" heartbeats', T, async () => {
    const page = await lab.page('/?project=abort-test');
    await send(page, 'Answer slow please');
    await page.waitForFunction(() => (document.querySelector('.msg.assistant .md')?.textContent ?? '').length > 0, null, { timeout: 15_000 });
    await page.waitForFunction(() => /Still working/.test(document.getElementById('status').textContent), null, { timeout: 15_000 });
    await screenshot(page, 'desktop-streaming');
    const started = Date.now();
    await page.click('#stop');
    await finished(page, 15_000);
    const took = Date.now() - started;
    assert.ok(took < 10_000, `the stream ended ${took} ms after stop`);
    assert.equal(await page.isVisible('#stop'), false);
    assert.match(await page.textContent('.msg.assistant .note'), /Stopped/);
    const words = (await page.textContent('.msg.assistant .md')).match(/slowly/g)?.length ?? 0;
    assert.ok(words < 60, `stopped before the end (${words} of 60 words)`);
    assert.equal(await page.textContent('#status'), '');
    await page.waitForFunction(() => document.querySelector('[data-stat="Stopped turns"]')?.textContent === '1');
    // The session is free again: another turn goes through.
    await send(page, 'quick after stop');
    await finished(page);
    assert.match(await page.locator('.msg.assistant').last().textContent(), /Quick answer/);
    clean(page);
    await page.close();
  });

  test('a network drop during an answer: the console rejoins the stream and shows the rest once', T, async () => {
    // The page talks to the server through a proxy the test cuts.
    const proxy = await Cutter.start(lab.url);
    try {
      const page = await lab.page('/?project=drop-test', { base: proxy.url, allowConsole: [/net::ERR_|Failed to load resource/] });
      const rejoins = [];
      page.on('request', (r) => {
        if (r.method() === 'GET' && /\/sessions\/[0-9a-f-]{36}\/stream/.test(r.url())) rejoins.push(r.headers()['last-event-id'] ?? '');
      });
      await send(page, 'A long answer please');
      await grown(page, 20);
      // Drop every connection and refuse new ones for a while: the page
      // says so and tries again.
      proxy.hold(true);
      proxy.cut();
      await page.waitForFunction(() => document.getElementById('status').textContent === 'Reconnecting…');
      await until(() => proxy.refused > 0);
      proxy.hold(false);
      await finished(page);
      assert.deepEqual(await texts(page), [longAnswer], 'the whole answer, once');
      assert.equal(await page.locator('.msg.assistant').count(), 1);
      assert.equal(await page.locator('.error-block').count(), 0);
      assert.equal(await page.textContent('#status'), '');
      assert.ok(rejoins.length >= 1, 'the page asked for the rest of the stream');
      assert.match(rejoins[rejoins.length - 1], /^[0-9a-f-]{36}:\d+$/, 'after the last event it had');
      // The history agrees.
      await page.reload();
      await page.waitForSelector('.msg.assistant.finished');
      assert.deepEqual(await texts(page), [longAnswer]);
      clean(page);
      await page.close();
    } finally {
      await proxy.close();
    }
  });

  test('a reload during an answer: the page rejoins the running turn, its text and tool card once', T, async () => {
    const page = await lab.page('/?project=reload-test');
    await send(page, 'Please use a tool, then give a long answer');
    await page.waitForSelector('.tool[data-status="failed"]', { timeout: 30_000 });
    await grown(page, 10);
    const url = page.url();
    const rejoined = page.waitForResponse((r) => /\/stream\?running=true$/.test(r.url()));
    await page.reload();
    assert.equal((await rejoined).status(), 200, 'the turn was still running');
    await finished(page);
    assert.equal(page.url(), url);
    const check = async () => {
      assert.equal(await page.locator('.msg.user').count(), 1);
      assert.equal(await page.locator('.msg.assistant').count(), 1);
      assert.equal(await page.locator('.tool').count(), 1, 'one tool card');
      assert.equal(await page.locator('.tool .tool-status').textContent(), 'failed');
      const order = await page.$$eval('.msg.assistant .msg-body > *', (els) => els.map((e) => e.className));
      assert.deepEqual(order, ['md', 'tool', 'md']);
      assert.deepEqual(await texts(page), ['Let me add two nodes.', longAnswer]);
    };
    await check();
    assert.equal(await page.locator('.error-block').count(), 0);
    // Once over, the history shows the same.
    await page.reload();
    await page.waitForSelector('.msg.assistant.finished .tool[data-status="failed"]');
    await check();
    clean(page);
    await page.close();
  });

  test('a second tab on the same session shows the live answer to its end, and can stop it', T, async () => {
    const project = 'two-tabs';
    const first = await lab.page(`/?project=${project}`);
    await send(first, 'One more long answer');
    await grown(first, 10);
    const id = sessionOf(first);
    const rejoined = lab.context.waitForEvent('response', (r) => r.url().endsWith(`/sessions/${id}/stream?running=true`));
    const second = await lab.page(`/?project=${project}#session=${id}`);
    assert.equal((await rejoined).status(), 200, 'the turn was still running');
    await finished(second);
    assert.equal(await second.locator('.msg.user').textContent(), 'One more long answer');
    assert.deepEqual(await texts(second), [longAnswer]);
    await finished(first);
    assert.deepEqual(await texts(first), [longAnswer]);

    // A slow answer of the first tab, stopped from the second one after a
    // reload: the second tab is busy with it, as the first.
    await send(first, 'Answer slow please');
    await first.waitForFunction(() => (document.querySelectorAll('.msg.assistant .md')[1]?.textContent ?? '').length > 0, null, { timeout: 15_000 });
    await second.reload();
    await second.waitForSelector('#stop:not([hidden])');
    assert.equal(await second.locator('.msg.user').count(), 2);
    await second.waitForFunction(() => /^(Answering|Still working)/.test(document.getElementById('status').textContent));
    await second.click('#stop');
    await finished(second, 15_000);
    await finished(first, 15_000);
    assert.match(await second.locator('.msg.assistant').last().textContent(), /Stopped\./);
    for (const page of [first, second]) {
      const words = (await page.locator('.msg.assistant').last().locator('.md').textContent()).match(/slowly/g)?.length ?? 0;
      assert.ok(words > 0 && words < 60, `stopped before the end (${words} of 60 words)`);
      assert.equal(await page.locator('.msg.assistant').count(), 2);
    }
    clean(first);
    clean(second);
    await first.close();
    await second.close();
  });

  test('errors show in place', T, async () => {
    const page = await lab.page('/?project=error-test');
    await send(page, 'please fail');
    await finished(page, 60_000);
    const err = page.locator('.msg.assistant .error-block');
    assert.equal(await err.count(), 1);
    assert.ok((await err.textContent()).length > 0);
    await screenshot(page, 'desktop-error');
    clean(page);
    await page.close();
  });

  test('a narrow window: drawer sidebar, readable chat', T, async () => {
    const page = await lab.page('/?project=tool-test', { viewport: { width: 390, height: 800 } });
    await send(page, 'quick on a phone');
    await finished(page);
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    assert.ok(overflow <= 0, `the page is ${overflow}px wider than the window`);
    const box = await page.locator('#sidebar').boundingBox();
    assert.ok(!box || box.x + box.width <= 0, 'the sidebar is out of the way');
    await screenshot(page, 'narrow-chat');
    await page.click('#toggle-sidebar');
    await page.waitForFunction(() => document.getElementById('sidebar').getBoundingClientRect().x >= 0);
    assert.ok((await page.locator('.session').count()) >= 2);
    await screenshot(page, 'narrow-drawer');
    await page.click('#scrim', { position: { x: 370, y: 400 } });
    await page.waitForFunction(() => document.getElementById('sidebar').getBoundingClientRect().right <= 0);
    await page.click('#toggle-details');
    await page.waitForSelector('#details [data-stat="Messages"]');
    await screenshot(page, 'narrow-stats');
    clean(page);
    await page.close();
  });

  test('settings: list, create, set default and delete model configurations', T, async () => {
    const page = await lab.page('/?project=settings');
    await page.click('#open-settings');
    await page.waitForSelector('#settings-dialog[open]');
    await page.waitForSelector('#configs >> text=No configuration yet');
    const add = async (name, key, isDefault) => {
      await page.fill('#config-form [name="name"]', name);
      await page.fill('#config-form [name="provider"]', 'openai');
      await page.fill('#config-form [name="model"]', 'scripted');
      await page.fill('#config-form [name="base_url"]', `${lab.llm.url}/v1`);
      await page.fill('#config-form [name="api_key"]', key);
      await page.fill('#config-form [name="context_limit"]', '64');
      await page.setChecked('#config-form [name="is_default"]', isDefault);
      await page.click('#config-form button[type="submit"]');
      await page.waitForSelector(`.config >> text=${name}`);
    };
    await add('Scripted one', 'sk-test-key-1111', true);
    await add('Scripted two', 'sk-test-key-2222', false);
    const one = page.locator('.config', { hasText: 'Scripted one' });
    const two = page.locator('.config', { hasText: 'Scripted two' });
    assert.equal(await one.locator('.badge').textContent(), 'default');
    assert.equal(await two.locator('.badge').count(), 0);
    assert.match(await one.textContent(), /openai · scripted/);
    assert.match(await one.textContent(), /64k context/);
    assert.match(await one.textContent(), /key .*1111/);
    assert.doesNotMatch(await page.textContent('#configs'), /sk-test-key-1111/, 'the key is never shown whole');
    await screenshot(page, 'desktop-settings');

    await two.locator('.make-default').click();
    await page.waitForSelector('.config.is-default >> text=Scripted two');
    const list = (await lab.api('GET', '/v3/access/users/me/llm-model-configs')).body;
    assert.equal(list.default_config.name, 'Scripted two');

    // A turn uses the default configuration (the same scripted LLM).
    await page.click('#settings-dialog button[aria-label="Close"]');
    await send(page, 'quick with my own model');
    await finished(page);
    assert.match(await page.locator('.msg.assistant').last().textContent(), /Quick answer/);

    await page.click('#open-settings');
    for (const name of ['Scripted two', 'Scripted one']) {
      await page.locator('.config', { hasText: name }).locator('.delete-config').click();
      await page.click('#confirm-ok');
      await page.locator('.config', { hasText: name }).waitFor({ state: 'detached' });
    }
    await page.waitForSelector('#configs >> text=No configuration yet');
    assert.equal((await lab.api('GET', '/v3/access/users/me/llm-model-configs')).body.total, 0);
    clean(page);
    await page.close();
  });
});

describe('web console with JWT_SECRET', () => {
  const secret = 'browser-test-secret-0123456789abcdef';
  let lab;
  before(async () => {
    lab = await Lab.start({ jwtSecret: secret, name: 'server-jwt' });
  });
  after(async () => {
    await lab?.close();
  });

  test('asks for a token once, keeps it in sessionStorage only', T, async () => {
    // The first requests are refused: the browser logs those 401s.
    const page = await lab.page('/?project=jwt-project', { allowConsole: [/status of 401/] });
    await page.waitForSelector('#token-dialog[open]');
    assert.match(await page.textContent('#token-reason'), /Not authenticated/);
    const token = jwt(secret, 'alice');
    await page.fill('#token', token);
    await page.click('#token-dialog button[value="save"]');
    await page.waitForSelector('#sessions-empty:not([hidden])');
    await send(page, 'quick hello from alice');
    await finished(page);
    assert.match(await page.locator('.msg.assistant').textContent(), /Quick answer/);
    await page.waitForSelector('.session');
    const list = (await lab.api('GET', '/v3/projects/jwt-project/chat/sessions', undefined, token)).body;
    assert.equal(list.length, 1);
    assert.equal(list[0].user_id, 'alice');
    const where = await page.evaluate(() => ({
      session: sessionStorage.getItem('agentchat.token'),
      local: JSON.stringify({ ...localStorage }),
      url: location.href,
    }));
    assert.equal(where.session, token);
    assert.ok(!where.local.includes(token), 'the token is not in localStorage');
    assert.ok(!where.url.includes(token), 'the token is not in the URL');
    // A reload in the same tab keeps it: no second prompt.
    await page.reload();
    await page.waitForSelector('.msg.user >> text=quick hello from alice');
    assert.equal(await page.isVisible('#token-dialog'), false);
    clean(page);
    await page.close();
  });
});

describe('web console with GNS3_URL', () => {
  // The projects of internal/webui/webtest/gns3, as the page lists them.
  const access = '5a0c4e1e-0b7e-4d55-9d1f-3c8f1a2b4c03';
  const campus = '5a0c4e1e-0b7e-4d55-9d1f-3c8f1a2b4c01';
  const branch = '5a0c4e1e-0b7e-4d55-9d1f-3c8f1a2b4c02';
  const archive = '5a0c4e1e-0b7e-4d55-9d1f-3c8f1a2b4c04';
  let lab;
  before(async () => {
    lab = await Lab.start({ gns3: true, name: 'server-gns3' });
  });
  after(async () => {
    await lab?.close();
  });

  test('the project field lists the GNS3 projects, opened first, and still takes any id', T, async () => {
    // Refusals of the project check below are logged by the browser.
    const page = await lab.page('/', { allowConsole: [/status of 403/, /status of 404/] });
    // A first visit starts in the first opened project.
    await page.waitForSelector('#project-picker:not([hidden])');
    const options = await page.$$eval('#project-picker option', (els) => els.map((e) => [e.value, e.textContent, e.dataset.status ?? '']));
    assert.deepEqual(options, [
      ['', 'GNS3 projects…', ''],
      [access, 'Access lab (opened)', 'opened'],
      [campus, 'Campus OSPF (opened)', 'opened'],
      [branch, 'branch-vpn (closed)', 'closed'],
      [archive, 'Old archive (closed)', 'closed'],
    ]);
    await page.waitForFunction((id) => document.getElementById('project').value === id, access);
    assert.equal(await page.inputValue('#project-picker'), access);
    const suggestions = await page.$$eval('#projects option', (els) => els.map((e) => [e.value, e.label]));
    assert.deepEqual(suggestions.slice(0, 2), [[access, 'Access lab (opened)'], [campus, 'Campus OSPF (opened)']]);
    await page.waitForSelector('#sessions-empty:not([hidden])');

    // Pick one: the field, the sidebar and the chat follow.
    await page.selectOption('#project-picker', campus);
    await page.waitForFunction((id) => document.getElementById('project').value === id, campus);
    await page.waitForSelector('#sessions-empty:not([hidden])');
    assert.equal(await page.isVisible('#sessions-error'), false);
    await screenshot(page, 'desktop-gns3-projects');
    await send(page, 'quick hello in the campus lab');
    await finished(page);
    assert.match(await page.locator('.msg.assistant').last().textContent(), /Quick answer/);
    await page.waitForSelector('.session');
    assert.equal((await sessions(lab, campus)).length, 1);

    // Remembered across a reload.
    await page.goto(lab.url + '/');
    await page.waitForSelector('#project-picker:not([hidden])');
    await page.waitForFunction((id) => document.getElementById('project-picker').value === id, campus);
    assert.equal(await page.inputValue('#project'), campus);
    await page.waitForSelector('.session');

    // A closed project is listed; the server says why it cannot chat.
    await page.selectOption('#project-picker', branch);
    await page.waitForSelector('#sessions-error:not([hidden])');
    assert.match(await page.textContent('#sessions-error'), /must be opened/);

    // Any id can still be typed: the picker then names none.
    await page.fill('#project', 'typed-by-hand');
    await page.press('#project', 'Enter');
    await page.waitForFunction(() => document.getElementById('project-picker').value === '');
    assert.equal(await page.inputValue('#project'), 'typed-by-hand');
    await page.waitForSelector('#sessions-error:not([hidden])');
    assert.match(await page.textContent('#sessions-error'), /not found/);
    clean(page);
    await page.close();

    // A narrow window has room for both.
    const narrow = await lab.page(`/?project=${campus}`, { viewport: { width: 390, height: 800 } });
    await narrow.waitForSelector('#project-picker:not([hidden])');
    await narrow.waitForFunction((id) => document.getElementById('project-picker').value === id, campus);
    const overflow = await narrow.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    assert.ok(overflow <= 0, `the page is ${overflow}px wider than the window`);
    await screenshot(narrow, 'narrow-gns3-projects');
    clean(narrow);
    await narrow.close();
  });

  test('approval cards: a change waits, survives a reload, runs once approved after a snapshot, and undo restores it', T, async () => {
    const page = await lab.page(`/?project=${access}`);
    await page.waitForFunction((id) => document.getElementById('project').value === id, access);
    await page.selectOption('#mode', 'lab_automation_assistant');
    await page.selectOption('#approval', 'changes');
    await send(page, 'Please use a tool to add two PCs');
    const card = page.locator('.tool.approval[data-tool-name="create_gns3_node"]');
    await card.waitFor();
    await finished(page);
    assert.equal(await card.locator('.approval-summary').textContent(), 'create PC1 (VPCS), PC2 (VPCS)');
    assert.match(await card.locator('.tool-args').textContent(), /"name": "PC1"/);
    assert.equal(await page.locator('.tool:not(.approval)[data-tool-name="create_gns3_node"] .tool-status').textContent(), 'awaiting approval');
    await screenshot(page, 'desktop-approval');

    // A reload shows the pending call again, from the session's metadata.
    await page.reload();
    const again = page.locator('.tool.approval[data-tool-name="create_gns3_node"][data-decision="pending"]');
    await again.waitFor();

    // Approve: the turn goes on, a snapshot first, then the nodes.
    await again.locator('button.approve').click();
    const snap = page.locator('.snapshot[data-snapshot]:not([data-snapshot="failed"])');
    await snap.waitFor({ timeout: 30_000 });
    await finished(page);
    assert.match(await snap.textContent(), /Snapshot “copilot /);
    const ran = page.locator('.msg.assistant').last().locator('.tool[data-tool-name="create_gns3_node"]');
    assert.match(await ran.locator('.tool-status').textContent(), /done|failed/);
    assert.match(await page.locator('.msg.assistant .md').last().textContent(), /The tool answered/);

    // Undo, after a confirmation.
    await snap.locator('button.undo').click();
    await page.waitForSelector('#confirm-dialog[open]');
    await page.click('#confirm-ok');
    await page.waitForSelector('.snapshot .undone');
    assert.match(await page.textContent('.snapshot .undone'), /Restored/);

    // The audit lists the approved change.
    const audit = (await lab.api('GET', `/v3/projects/${access}/chat/audit`)).body;
    assert.deepEqual(audit.entries.map((e) => [e.tool, e.decision]), [['undo_gns3_snapshot', 'not_required'], ['create_gns3_node', 'approved']]);
    clean(page);
    await page.close();
  });
});
