// The video object of OpenAI's video API as a client sees it, built from the gateway's task row: its public id, the
// state the poller last wrote, the model, seconds and size the submit kept, and never anything of the upstream's
// (its id, its key, its URLs).
import { TASK_STATUS } from '../../services/tasks/status.js';

export interface VideoTaskRow {
  task_id: string;
  status: string;
  progress: string;
  fail_reason: string;
  submit_time: number | string;
  finish_time: number | string;
  properties: string;
  data: string;
}

const VIDEO_STATUS: Record<string, 'queued' | 'in_progress' | 'completed' | 'failed'> = {
  [TASK_STATUS.inProgress]: 'in_progress',
  [TASK_STATUS.success]: 'completed',
  [TASK_STATUS.failure]: 'failed',
};

function objectOf(text: string): Record<string, unknown> {
  try {
    const v: unknown = JSON.parse(text || '{}');
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

export function videoObject(row: VideoTaskRow) {
  const props = objectOf(row.properties);
  const data = objectOf(row.data);
  // a task not yet started, or in a state OpenAI has no name for, is queued to the client
  const status = VIDEO_STATUS[row.status] ?? 'queued';
  const finished = status === 'completed' || status === 'failed';
  const progress = status === 'completed' ? 100 : Math.min(100, Number.parseInt(row.progress, 10) || 0);
  return {
    id: row.task_id,
    object: 'video' as const,
    model: typeof props.model === 'string' ? props.model : '',
    status,
    progress,
    prompt: typeof props.input === 'string' ? props.input : null,
    created_at: Number(row.submit_time),
    completed_at: finished && Number(row.finish_time) > 0 ? Number(row.finish_time) : null,
    expires_at: typeof data.expires_at === 'number' ? data.expires_at : null,
    seconds: props.seconds === undefined ? '' : String(props.seconds),
    size: typeof props.size === 'string' ? props.size : '',
    remixed_from_video_id: typeof props.remixed_from === 'string' ? props.remixed_from : null,
    error: status === 'failed' ? { code: 'video_generation_failed', message: row.fail_reason || 'task failed' } : null,
  };
}
