// The composer's attachments before sending: files from the picker, a paste or a drop are
// checked against what the model reads (/props modalities) and the size limit, then read as
// data URLs. A refused file leaves a notice that says why, never a silent drop.

import { useCallback, useRef, useState } from 'preact/hooks';
import { MAX_ATTACHMENTS, readAttachment, refusalFor } from '../attachments.js';

// modalities: { vision, audio }, the same object while they do not change.
export function useAttachments(modalities) {
  const [attachments, setAttachments] = useState([]); // [{ meta, dataUrl }]
  const [notice, setNotice] = useState('');
  const count = useRef(0);
  count.current = attachments.length;

  const add = useCallback(async (files) => {
    const problems = [];
    const accepted = [];
    for (const file of files) {
      const refusal = refusalFor(file, modalities);
      if (refusal) problems.push(refusal);
      else if (count.current + accepted.length >= MAX_ATTACHMENTS) {
        problems.push(`${file.name || 'A file'} was not attached: at most ${MAX_ATTACHMENTS} files per message.`);
      } else accepted.push(file);
    }
    setNotice(problems.join('\n'));
    const read = await Promise.all(accepted.map((file) => readAttachment(file).catch((err) => {
      problems.push(`${file.name || 'A file'} could not be read: ${err.message || err}`);
      return null;
    })));
    if (problems.length) setNotice(problems.join('\n'));
    const added = read.filter(Boolean);
    if (added.length) setAttachments((list) => [...list, ...added].slice(0, MAX_ATTACHMENTS));
  }, [modalities]);

  const remove = useCallback((id) => {
    setAttachments((list) => list.filter((attachment) => attachment.meta.id !== id));
  }, []);

  const clear = useCallback(() => {
    setAttachments([]);
    setNotice('');
  }, []);

  return { attachments, notice, setNotice, add, remove, clear };
}
