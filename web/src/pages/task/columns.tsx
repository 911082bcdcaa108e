// The table columns of the drawing log and the task log (spec §2): times, duration coloured by §9, status and
// progress tags, the result (image preview, link) and the texts (prompt, failure reason, the full record) on click.
import type { ReactNode } from 'react';
import type { TFunction } from 'i18next';
import { Button, Image, Progress, Space, Tag, Typography } from 'antd';
import type { ColumnsType } from 'antd/es/table';
import { renderQuota, renderTime } from '../../lib/render.js';
import {
  durationColor,
  durationSeconds,
  progressPercent,
  STATUS_COLORS,
  SUBMIT_CODES,
  videoSource,
  type MjRow,
  type TaskRow,
} from './logic.js';

/** Opens the text modal with a title and its content. */
export type ShowText = (title: string, text: string) => void;
/** Opens the player of a finished video task. */
export type PlayVideo = (row: TaskRow) => void;

const seconds = (ms: number, unit: 'ms' | 's') => (unit === 'ms' ? Math.floor(ms / 1000) : ms);
const time = (v: number, unit: 'ms' | 's') => (v ? renderTime(seconds(v, unit)) : '-');

function durationTag(t: TFunction, submit: number, finish: number, unit: 'ms' | 's', id: string): ReactNode {
  const secs = durationSeconds(submit, finish, unit);
  if (secs === null) return '-';
  return (
    <Tag color={durationColor(secs)} data-testid={`duration-${id}`}>
      {t('seconds', { n: secs })}
    </Tag>
  );
}

function statusTag(t: TFunction, status: string, id: string): ReactNode {
  const key = status ? `status.${status}` : 'status.empty';
  return (
    <Tag color={STATUS_COLORS[status] ?? 'default'} data-testid={`status-${id}`}>
      {t(key, { defaultValue: status })}
    </Tag>
  );
}

function progressView(progress: string, id: string): ReactNode {
  const pct = progressPercent(progress);
  if (pct === null) return progress ? <Tag>{progress}</Tag> : '-';
  return (
    <span data-testid={`progress-${id}`}>
      <Progress type="circle" percent={pct} size={32} status={pct === 100 ? 'success' : 'active'} />
    </span>
  );
}

function textCell(t: TFunction, show: ShowText, title: string, text: string, testId: string): ReactNode {
  if (!text) return <Typography.Text type="secondary">{t('none')}</Typography.Text>;
  return (
    <Typography.Link data-testid={testId} onClick={() => show(title, text)}>
      <Typography.Text ellipsis style={{ maxWidth: 200 }}>
        {text}
      </Typography.Text>
    </Typography.Link>
  );
}

function adminColumns<T extends { username?: string; channel_id: number; channel_name?: string }>(
  t: TFunction,
): ColumnsType<T> {
  return [
    {
      key: 'channel',
      title: t('col.channel'),
      render: (_: unknown, r: T) => (
        <Tag color="blue" title={r.channel_name}>
          {r.channel_id}
        </Tag>
      ),
    },
    { key: 'user', title: t('col.user'), dataIndex: 'username' },
  ];
}

export function mjColumns(t: TFunction, admin: boolean, show: ShowText): ColumnsType<MjRow> {
  const cols: ColumnsType<MjRow> = [
    { key: 'submit', title: t('col.submit'), render: (_, r) => time(r.submit_time, 'ms') },
    {
      key: 'duration',
      title: t('col.duration'),
      render: (_, r) => durationTag(t, r.submit_time, r.finish_time, 'ms', r.mj_id),
    },
    ...(admin ? adminColumns<MjRow>(t) : []),
    {
      key: 'action',
      title: t('col.action'),
      render: (_, r) => <Tag>{t(`action.${r.action}`, { defaultValue: r.action })}</Tag>,
    },
    {
      key: 'id',
      title: t('col.id'),
      render: (_, r) => textCell(t, show, t('col.id'), r.mj_id, `mjid-${r.mj_id}`),
    },
    {
      key: 'code',
      title: t('col.code'),
      render: (_, r) => (
        <Tag color={r.code === 1 ? 'green' : r.code === 21 || r.code === 22 ? 'gold' : 'default'}>
          {SUBMIT_CODES[r.code] ? t(SUBMIT_CODES[r.code]!) : String(r.code)}
        </Tag>
      ),
    },
    { key: 'status', title: t('col.status'), render: (_, r) => statusTag(t, r.status, r.mj_id) },
    { key: 'progress', title: t('col.progress'), render: (_, r) => progressView(r.progress, r.mj_id) },
    {
      key: 'image',
      title: t('col.image'),
      render: (_, r) =>
        r.image_url ? (
          <Image
            width={48}
            src={r.image_url}
            alt={r.mj_id}
            data-testid={`image-${r.mj_id}`}
            preview={{ src: r.image_url }}
          />
        ) : r.video_url ? (
          <Typography.Link href={r.video_url} target="_blank" rel="noreferrer">
            {t('open')}
          </Typography.Link>
        ) : (
          t('none')
        ),
    },
    {
      key: 'prompt',
      title: t('col.prompt'),
      render: (_, r) => textCell(t, show, t('col.prompt'), r.prompt, `prompt-${r.mj_id}`),
    },
    {
      key: 'promptEn',
      title: t('col.promptEn'),
      render: (_, r) => textCell(t, show, t('col.promptEn'), r.prompt_en, `prompten-${r.mj_id}`),
    },
    {
      key: 'fail',
      title: t('col.failReason'),
      render: (_, r) => textCell(t, show, t('col.failReason'), r.fail_reason, `fail-${r.mj_id}`),
    },
    {
      key: 'detail',
      title: t('detail'),
      render: (_, r) => (
        <Button
          size="small"
          data-testid={`detail-${r.mj_id}`}
          onClick={() => show(r.mj_id, JSON.stringify(r, null, 2))}
        >
          {t('detail')}
        </Button>
      ),
    },
  ];
  if (admin) cols.splice(2, 0, { key: 'quota', title: t('col.quota'), render: (_, r) => renderQuota(r.quota, 6) });
  return cols;
}

/** A task's result: a finished video's Play action (and its upstream address), else the result link. */
function taskResult(t: TFunction, r: TaskRow, play: PlayVideo): ReactNode {
  const link = /^https?:\/\//i.test(r.result_url) ? (
    <Typography.Link href={r.result_url} target="_blank" rel="noreferrer" data-testid={`result-${r.task_id}`}>
      {t('open')}
    </Typography.Link>
  ) : null;
  if (videoSource(r))
    return (
      <Space size={8}>
        <Button size="small" type="primary" data-testid={`play-${r.task_id}`} onClick={() => play(r)}>
          {t('video.play')}
        </Button>
        {link}
      </Space>
    );
  return link ?? (r.result_url ? <Typography.Text copyable>{r.result_url}</Typography.Text> : t('none'));
}

export function taskColumns(t: TFunction, admin: boolean, show: ShowText, play: PlayVideo): ColumnsType<TaskRow> {
  return [
    { key: 'submit', title: t('col.submit'), render: (_, r) => time(r.submit_time, 's') },
    { key: 'finish', title: t('col.finish'), render: (_, r) => time(r.finish_time, 's') },
    { key: 'progress', title: t('col.progress'), render: (_, r) => progressView(r.progress, r.task_id) },
    {
      key: 'duration',
      title: t('col.duration'),
      render: (_, r) => durationTag(t, r.submit_time, r.finish_time, 's', r.task_id),
    },
    ...(admin ? adminColumns<TaskRow>(t) : []),
    { key: 'platform', title: t('col.platform'), render: (_, r) => <Tag color="cyan">{r.platform}</Tag> },
    {
      key: 'action',
      title: t('col.action'),
      render: (_, r) => <Tag>{t(`action.${r.action}`, { defaultValue: r.action })}</Tag>,
    },
    {
      key: 'id',
      title: t('col.id'),
      // the full record (its result JSON included) as text, as the spec's task ID click
      render: (_, r) => (
        <Typography.Link
          data-testid={`detail-${r.task_id}`}
          onClick={() => show(r.task_id, JSON.stringify(r, null, 2))}
        >
          {r.task_id}
        </Typography.Link>
      ),
    },
    { key: 'status', title: t('col.status'), render: (_, r) => statusTag(t, r.status, r.task_id) },
    {
      key: 'result',
      title: t('col.result'),
      render: (_, r) => taskResult(t, r, play),
    },
    {
      key: 'fail',
      title: t('col.failReason'),
      render: (_, r) => textCell(t, show, t('col.failReason'), r.fail_reason, `fail-${r.task_id}`),
    },
  ];
}
