// Suno's submit validation and defaults as new-api's, and its answers read into the task engine's terms.
import { describe, expect, it } from 'vitest';
import {
  readSunoFetchAnswer,
  readSunoSubmitAnswer,
  sunoModelName,
  validateSunoSubmit,
} from '../../src/relay/providers/suno/adaptor.js';

describe('Suno submit validation', () => {
  it('defaults mv to chirp-v3-0 for MUSIC and keeps the fields given', () => {
    expect(validateSunoSubmit('MUSIC', { prompt: 'a song', make_instrumental: true })).toEqual({
      ok: true,
      action: 'MUSIC',
      request: { prompt: 'a song', make_instrumental: true, mv: 'chirp-v3-0' },
    });
    expect(validateSunoSubmit('music', { gpt_description_prompt: 'jazz', mv: 'chirp-v3-5' })).toEqual({
      ok: true,
      action: 'MUSIC',
      request: { gpt_description_prompt: 'jazz', mv: 'chirp-v3-5' },
    });
  });

  it('refuses LYRICS without a prompt, an unknown action, and fields of the wrong type', () => {
    expect(validateSunoSubmit('LYRICS', {})).toEqual({ ok: false, code: 'prompt_empty' });
    expect(validateSunoSubmit('LYRICS', { prompt: '' })).toEqual({ ok: false, code: 'prompt_empty' });
    expect(validateSunoSubmit('VIDEO', { prompt: 'x' })).toEqual({ ok: false, code: 'invalid_action' });
    expect(validateSunoSubmit('MUSIC', { prompt: 5 })).toEqual({ ok: false, code: 'invalid_request' });
    expect(validateSunoSubmit('MUSIC', { continue_at: '3' })).toEqual({ ok: false, code: 'invalid_request' });
    expect(validateSunoSubmit('MUSIC', [])).toEqual({ ok: false, code: 'invalid_request' });
    expect(validateSunoSubmit('LYRICS', { prompt: 'words' })).toEqual({
      ok: true,
      action: 'LYRICS',
      request: { prompt: 'words' },
    });
  });

  it('prices MUSIC and LYRICS as suno_music and suno_lyrics', () => {
    expect(sunoModelName('MUSIC')).toBe('suno_music');
    expect(sunoModelName('LYRICS')).toBe('suno_lyrics');
  });
});

describe('Suno answers', () => {
  it('reads the upstream id of an accepted submit, and nothing from a refusal', () => {
    expect(readSunoSubmitAnswer({ code: 'success', message: '', data: 'up-1' })).toBe('up-1');
    expect(readSunoSubmitAnswer({ code: 'error', message: 'no', data: null })).toBeNull();
    expect(readSunoSubmitAnswer({ code: 'success', data: '' })).toBeNull();
    expect(readSunoSubmitAnswer('success')).toBeNull();
  });

  it('reads fetch items, leaves out those without an id, and reads an unknown status as UNKNOWN', () => {
    expect(
      readSunoFetchAnswer({
        code: 'success',
        data: [
          { task_id: 'up-1', status: 'FAILURE', fail_reason: 'moderation', data: [{ id: 'c1' }] },
          { task_id: 'up-2', status: 'IN_PROGRESS' },
          { task_id: 'up-3', status: 'STRANGE' },
          { status: 'SUCCESS' },
          null,
        ],
      }),
    ).toEqual([
      { upstreamId: 'up-1', status: 'FAILURE', failReason: 'moderation', data: [{ id: 'c1' }] },
      { upstreamId: 'up-2', status: 'IN_PROGRESS', failReason: '', data: null },
      { upstreamId: 'up-3', status: 'UNKNOWN', failReason: '', data: null },
    ]);
    expect(readSunoFetchAnswer({ code: 'error', data: [] })).toBeNull();
  });
});
