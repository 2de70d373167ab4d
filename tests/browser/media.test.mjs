// Browser tests of images and audio in the web chat page: the attach button, paste and drop,
// the size and type checks, the content parts sent, thumbnails in the conversation, storage
// (IndexedDB) across a reload, and the export. Imported by webui.test.mjs, whose harness
// starts the browser and the stories260K server; /props' modalities (which that server
// reports false) and the completions are answered by request interception (page.route).

import fs from 'node:fs';
import zlib from 'node:zlib';

import { test, assert, poll, withPage, openChat, mainServer, send, waitForAnswer, screenshotPath } from './harness.mjs';

// A valid PNG of width x height pixels, all of one RGB colour (8-bit truecolour, no filter).
function solidPng(width, height, [r, g, b]) {
  const chunk = (type, data) => {
    const head = Buffer.alloc(8);
    head.writeUInt32BE(data.length, 0);
    head.write(type, 4, 'latin1');
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(zlib.crc32(Buffer.concat([head.subarray(4), data])), 0);
    return Buffer.concat([head, data, crc]);
  };
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header.set([8, 2, 0, 0, 0], 8);
  const row = Buffer.concat([Buffer.from([0]), Buffer.from(Array.from({ length: width }, () => [r, g, b]).flat())]);
  const pixels = zlib.deflateSync(Buffer.concat(Array.from({ length: height }, () => row)));
  return Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', header), chunk('IDAT', pixels), chunk('IEND', Buffer.alloc(0))]);
}

// A 16 kHz mono 16-bit WAV of a 440 Hz tone.
function toneWav(samples) {
  const data = Buffer.alloc(samples * 2);
  for (let i = 0; i < samples; i++) data.writeInt16LE(Math.round(8000 * Math.sin((2 * Math.PI * 440 * i) / 16000)), i * 2);
  const head = Buffer.alloc(44);
  head.write('RIFF', 0, 'latin1');
  head.writeUInt32LE(36 + data.length, 4);
  head.write('WAVEfmt ', 8, 'latin1');
  head.writeUInt32LE(16, 16);
  head.writeUInt16LE(1, 20); // PCM
  head.writeUInt16LE(1, 22); // mono
  head.writeUInt32LE(16000, 24);
  head.writeUInt32LE(32000, 28);
  head.writeUInt16LE(2, 32);
  head.writeUInt16LE(16, 34);
  head.write('data', 36, 'latin1');
  head.writeUInt32LE(data.length, 40);
  return Buffer.concat([head, data]);
}

const RED = { name: 'red.png', mimeType: 'image/png', buffer: solidPng(5, 3, [220, 30, 30]) };
const BLUE = { name: 'blue.png', mimeType: 'image/png', buffer: solidPng(4, 4, [30, 30, 220]) };
const TONE = { name: 'tone.wav', mimeType: 'audio/wav', buffer: toneWav(1600) };
const dataUri = (file) => `data:${file.mimeType};base64,${file.buffer.toString('base64')}`;

// /props as the server answers it, with `modalities` replaced (as llama-server reports them).
async function serveModalities(page, { vision = false, audio = false }) {
  await page.route('**/props', async (route) => {
    const response = await route.fetch();
    const json = await response.json();
    await route.fulfill({ response, json: { ...json, modalities: { vision, video: false, audio } } });
  });
}

// Answers every chat completion with a short stream; returns the request bodies.
async function answerCompletions(page) {
  const bodies = [];
  await page.route('**/v1/chat/completions', async (route) => {
    bodies.push(route.request().postDataJSON());
    const chunk = { choices: [{ index: 0, delta: { content: `answer ${bodies.length}` } }], model: 'mock-model' };
    await route.fulfill({
      status: 200, headers: { 'content-type': 'text/event-stream' }, body: `data: ${JSON.stringify(chunk)}\n\ndata: [DONE]\n\n`,
    });
  });
  return bodies;
}

// Dispatches a paste (on the composer's textarea) or a drop (on the composer) of `file`.
async function transferFile(page, how, file) {
  const target = page.getByTestId(how === 'paste' ? 'composer-input' : 'composer');
  await target.evaluate((element, { how, name, type, base64 }) => {
    const bytes = Uint8Array.from(atob(base64), (c) => c.charCodeAt(0));
    const transfer = new DataTransfer();
    transfer.items.add(new File([bytes], name, { type }));
    const init = { bubbles: true, cancelable: true };
    if (how === 'paste') {
      element.dispatchEvent(new ClipboardEvent('paste', { ...init, clipboardData: transfer }));
    } else {
      element.dispatchEvent(new DragEvent('dragover', { ...init, dataTransfer: transfer }));
      element.dispatchEvent(new DragEvent('drop', { ...init, dataTransfer: transfer }));
    }
  }, { how, name: file.name, type: file.mimeType, base64: file.buffer.toString('base64') });
}

// The src and decoded width of each image thumbnail under `locator`.
function thumbnails(locator) {
  return locator.locator('img').evaluateAll((all) => all.map((img) => ({ src: img.src, width: img.naturalWidth })));
}

// Whether the page's IndexedDB holds the attachment `id` (what a reload reads back).
function isStored(page, id) {
  return page.evaluate((key) => new Promise((resolve) => {
    const open = indexedDB.open('hearth-media');
    open.onerror = () => resolve(false);
    open.onsuccess = () => {
      const get = open.result.transaction('media').objectStore('media').get(key);
      get.onsuccess = () => resolve(!!(get.result && get.result.dataUrl));
      get.onerror = () => resolve(false);
    };
  }), id);
}

test('without a projector the attach button is disabled and says why; a pasted or dropped image gets a message', { timeout: 60_000 }, async (t) => {
  await withPage(t, async (page) => {
    await serveModalities(page, { vision: false, audio: false });
    await openChat(page, mainServer);
    const button = page.getByTestId('attach-button');
    assert.equal(await button.isDisabled(), true, 'the attach button is usable without a projector');
    assert.match(await button.getAttribute('title'), /no multimodal projector/);

    await transferFile(page, 'paste', RED);
    const notice = page.getByTestId('attachment-notice');
    await notice.waitFor({ state: 'visible' });
    assert.match(await notice.textContent(), /cannot read images: the server has no multimodal projector/);
    assert.equal(await page.getByTestId('attachment-preview').count(), 0, 'the pasted image was attached');
    await page.screenshot({ path: screenshotPath('08-paste-without-vision') });

    await notice.getByRole('button', { name: 'Dismiss' }).click();
    await notice.waitFor({ state: 'hidden' });
    await transferFile(page, 'drop', RED);
    await notice.waitFor({ state: 'visible' });
    assert.match(await notice.textContent(), /cannot read images/);
    assert.equal(await page.getByTestId('attachment-preview').count(), 0, 'the dropped image was attached');
    assert.equal(await page.getByTestId('send-button').isDisabled(), true);
  });
});

test('with vision: chosen, pasted and dropped images become removable thumbnails, are sent as image_url parts and stay after a reload', { timeout: 90_000 }, async (t) => {
  await withPage(t, async (page) => {
    await serveModalities(page, { vision: true });
    const bodies = await answerCompletions(page);
    await openChat(page, mainServer);
    const button = page.getByTestId('attach-button');
    await poll(async () => !(await button.isDisabled()), { what: 'the attach button to become usable' });
    assert.match(await page.getByTestId('attach-input').getAttribute('accept'), /image\/png/);

    // Two chosen files, one removed again before sending.
    await page.getByTestId('attach-input').setInputFiles([RED, BLUE]);
    const previews = page.getByTestId('attachment-preview');
    await poll(async () => (await previews.count()) === 2, { what: 'two thumbnails in the composer' });
    assert.deepEqual(await thumbnails(previews), [{ src: dataUri(RED), width: 5 }, { src: dataUri(BLUE), width: 4 }]);
    await page.screenshot({ path: screenshotPath('09-attached-thumbnails') });
    await previews.nth(1).getByTestId('attachment-remove').click();
    assert.deepEqual(await thumbnails(previews), [{ src: dataUri(RED), width: 5 }]);

    await send(page, 'What colour is this?');
    await waitForAnswer(page, 1);
    assert.equal(bodies.length, 1);
    assert.deepEqual(bodies[0].messages, [{
      role: 'user',
      content: [{ type: 'text', text: 'What colour is this?' }, { type: 'image_url', image_url: { url: dataUri(RED) } }],
    }]);
    assert.equal(await previews.count(), 0, 'the composer kept the sent attachment');
    const inConversation = page.getByTestId('message-user').getByTestId('message-attachment');
    assert.deepEqual(await thumbnails(inConversation), [{ src: dataUri(RED), width: 5 }]);

    // Saved: the message names the attachment (localStorage), its bytes are in IndexedDB.
    const saved = await poll(() => page.evaluate(() => {
      const list = JSON.parse(localStorage.getItem('hearth.conversations') || '[]');
      const user = list[0]?.messages?.[0];
      return list[0]?.messages?.length === 2 && user?.attachments?.length === 1 ? user.attachments[0] : null;
    }), { what: 'the conversation and its attachment to be saved' });
    assert.equal(saved.name, 'red.png');
    assert.equal(saved.kind, 'image');
    assert.equal(JSON.stringify(saved).includes('base64'), false, 'the image bytes went into localStorage');
    await poll(() => isStored(page, saved.id), { what: 'the image to be stored in IndexedDB' });

    await page.reload();
    await page.getByTestId('message-assistant').waitFor();
    await poll(async () => (await thumbnails(inConversation)).length === 1, { what: 'the thumbnail after the reload' });
    assert.deepEqual(await thumbnails(inConversation), [{ src: dataUri(RED), width: 5 }]);

    // A dropped and a pasted image go with the next message; the first image is sent again
    // as history (read back from storage after the reload).
    await poll(async () => !(await button.isDisabled()), { what: 'the attach button after the reload' });
    await transferFile(page, 'drop', BLUE);
    await transferFile(page, 'paste', RED);
    await poll(async () => (await previews.count()) === 2, { what: 'the dropped and pasted images in the composer' });
    await send(page, 'And these?');
    await waitForAnswer(page, 2);
    assert.equal(bodies.length, 2);
    assert.deepEqual(bodies[1].messages.map((m) => m.content), [
      bodies[0].messages[0].content,
      'answer 1',
      [{ type: 'text', text: 'And these?' }, { type: 'image_url', image_url: { url: dataUri(BLUE) } },
        { type: 'image_url', image_url: { url: dataUri(RED) } }],
    ]);
    await page.screenshot({ path: screenshotPath('10-images-in-conversation') });
  });
});

test('the export carries the images, and editing a message\'s text keeps its image', { timeout: 60_000 }, async (t) => {
  await withPage(t, async (page) => {
    await serveModalities(page, { vision: true });
    const bodies = await answerCompletions(page);
    await openChat(page, mainServer);
    const input = page.getByTestId('attach-input');
    await poll(async () => !(await input.isDisabled()), { what: 'the file picker to become usable' });
    await input.setInputFiles([RED, BLUE]);
    await poll(async () => (await page.getByTestId('attachment-preview').count()) === 2, { what: 'two thumbnails' });
    await send(page, 'Compare');
    await waitForAnswer(page, 1);

    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByTestId('conversation-export').click(),
    ]);
    const exported = JSON.parse(fs.readFileSync(await download.path(), 'utf8'));
    assert.deepEqual(exported.messages[0].attachments.map((a) => [a.name, a.kind, a.dataUrl]),
      [['red.png', 'image', dataUri(RED)], ['blue.png', 'image', dataUri(BLUE)]]);

    await page.getByTestId('message-user').getByTestId('message-edit').click();
    await page.getByTestId('edit-input').fill('Which is darker?');
    await page.getByTestId('edit-save').click();
    await poll(() => bodies.length === 2, { what: 'the request for the edited message' });
    assert.deepEqual(bodies[1].messages, [{
      role: 'user',
      content: [{ type: 'text', text: 'Which is darker?' }, { type: 'image_url', image_url: { url: dataUri(RED) } },
        { type: 'image_url', image_url: { url: dataUri(BLUE) } }],
    }]);
    await waitForAnswer(page, 1);
    const inConversation = page.getByTestId('message-user').getByTestId('message-attachment');
    assert.deepEqual(await thumbnails(inConversation), [{ src: dataUri(RED), width: 5 }, { src: dataUri(BLUE), width: 4 }]);
  });
});

test('files over the size limit and of other types are refused with a message', { timeout: 60_000 }, async (t) => {
  await withPage(t, async (page) => {
    await serveModalities(page, { vision: true });
    await openChat(page, mainServer);
    const input = page.getByTestId('attach-input');
    await poll(async () => !(await input.isDisabled()), { what: 'the file picker to become usable' });
    const big = { name: 'big.png', mimeType: 'image/png', buffer: Buffer.concat([RED.buffer, Buffer.alloc(12 * 1024 * 1024)]) };
    await input.setInputFiles([big]);
    const notice = page.getByTestId('attachment-notice');
    await notice.waitFor({ state: 'visible' });
    assert.equal(await notice.textContent(), 'big.png is too large (12 MB): files up to 10 MB can be attached.');
    await input.setInputFiles([{ name: 'notes.txt', mimeType: 'text/plain', buffer: Buffer.from('hello') }]);
    await poll(async () => /notes\.txt cannot be attached: only PNG, JPEG, GIF or BMP images are accepted/.test(await notice.textContent()),
      { what: 'the message for a text file' });
    await input.setInputFiles([TONE]);
    await poll(async () => /cannot read audio/.test(await notice.textContent()), { what: 'the message for audio without an audio projector' });
    assert.equal(await page.getByTestId('attachment-preview').count(), 0, 'a refused file was attached');
    assert.equal(await page.getByTestId('send-button').isDisabled(), true);

    // A request over the server's body limit (HTTP 413, as hearth-server answers it) says what to do.
    await page.route('**/v1/chat/completions', (route) => route.fulfill({
      status: 413, contentType: 'application/json',
      body: '{"error":{"code":413,"message":"request body too large","type":"invalid_request_error"}}',
    }));
    await input.setInputFiles([RED]);
    await page.getByTestId('attachment-preview').waitFor();
    await page.getByTestId('send-button').click();
    const answer = await waitForAnswer(page, 1);
    assert.match(answer.error || '', /^request body too large\. The conversation with its attachments is too large to send/);
  });
});

test('with audio: a WAV file becomes a chip with its name and is sent alone as an input_audio part', { timeout: 60_000 }, async (t) => {
  await withPage(t, async (page) => {
    await serveModalities(page, { audio: true });
    const bodies = await answerCompletions(page);
    await openChat(page, mainServer);
    const input = page.getByTestId('attach-input');
    await poll(async () => !(await input.isDisabled()), { what: 'the file picker to become usable' });
    assert.match(await page.getByTestId('attach-button').getAttribute('title'), /audio/i);

    await transferFile(page, 'paste', RED);
    const notice = page.getByTestId('attachment-notice');
    await notice.waitFor({ state: 'visible' });
    assert.match(await notice.textContent(), /cannot read images/);

    await input.setInputFiles([TONE]);
    const chip = page.getByTestId('attachment-preview');
    await chip.waitFor();
    assert.equal(await chip.getAttribute('data-kind'), 'audio');
    assert.match(await chip.textContent(), /tone\.wav/);
    await page.getByTestId('send-button').click(); // no text: the audio alone
    await waitForAnswer(page, 1);
    assert.deepEqual(bodies[0].messages, [{
      role: 'user',
      content: [{ type: 'input_audio', input_audio: { data: TONE.buffer.toString('base64'), format: 'wav' } }],
    }]);
    assert.equal(await page.getByTestId('conversation-item').textContent(), 'tone.wav');
    const stored = page.getByTestId('message-user').getByTestId('message-attachment');
    assert.match(await stored.textContent(), /tone\.wav/);
    await poll(async () => (await stored.locator('audio').getAttribute('src')) === dataUri(TONE),
      { what: 'the audio player in the conversation' });
  });
});

test('an attachment no longer in browser storage is shown as missing, and the next message says so instead of dropping it', { timeout: 60_000 }, async (t) => {
  await withPage(t, async (page, context) => {
    // A conversation as another browser (or a cleared IndexedDB) leaves it: the message
    // names an attachment whose bytes are not stored here.
    await context.addInitScript(() => {
      const now = Date.now();
      const seed = [{
        id: 'seeded-media', title: 'Seeded image', createdAt: now, updatedAt: now,
        messages: [
          { id: 'u1', role: 'user', content: 'Look', createdAt: now,
            attachments: [{ id: 'lost-image', kind: 'image', name: 'lost.png', mime: 'image/png', size: 68 }] },
          { id: 'a1', role: 'assistant', content: 'Seen.', reasoning: '', toolCalls: [], model: 'm', timings: null,
            finishReason: 'stop', error: null, createdAt: now },
        ],
      }];
      try {
        if (!localStorage.getItem('hearth.conversations')) localStorage.setItem('hearth.conversations', JSON.stringify(seed));
      } catch {
        // about:blank has no storage.
      }
    });
    await serveModalities(page, { vision: true });
    const bodies = await answerCompletions(page);
    await openChat(page, mainServer);
    const attachment = page.getByTestId('message-user').getByTestId('message-attachment');
    await poll(async () => /image not stored/.test(await attachment.textContent()), { what: 'the missing image to be marked' });
    assert.equal(await attachment.getAttribute('title'), 'lost.png (68 B)');

    await send(page, 'And now?');
    const answer = await waitForAnswer(page, 2);
    assert.match(answer.error || '', /"lost\.png" is no longer in this browser's storage/);
    assert.equal(bodies.length, 0, 'the history was sent without its image');
  });
});
