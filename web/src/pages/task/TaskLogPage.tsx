// The drawing log (/midjourney, kind 'mj') and the task log (/task, kind 'task'): spec §2. A user reads their own
// rows (/api/mj/self, /api/task/self); an admin reads every row with channel and user columns (/api/mj/, /api/task/).
// The image URL is the row's: the server has already made it the forwarded /mj/image/{id} when MjForwardUrlEnabled.
// The rows are read through TanStack Query (queries.ts); this file holds the view's state and composes the toolbar,
// the table, the text modal and a finished video's player.
import { useCallback, useState } from 'react';
import { useTranslation } from 'react-i18next';
import dayjs from 'dayjs';
import { Alert, Card, Grid } from 'antd';
import { useStatus } from '../../context/status.js';
import { isAdmin, useUser } from '../../context/user.js';
import { getPageSize, setPageSize as storePageSize } from '../../lib/storage.js';
import { TASKLOG_NS } from './i18n.js';
import type { Filters, TaskRow } from './logic.js';
import { useReloadTaskLog, useTaskLog, type Kind } from './queries.js';
import TaskLogToolbar from './TaskLogToolbar.js';
import TaskLogTable from './TaskLogTable.js';
import TaskTextModal, { type ShownText } from './TaskTextModal.js';
import TaskVideoModal from './TaskVideoModal.js';

/** Spec §2: the drawing log opens on the last 30 days, the task log on today from 00:00. */
function initialFilters(kind: Kind): Filters {
  const start = kind === 'mj' ? dayjs().subtract(30, 'day').startOf('day') : dayjs().startOf('day');
  return {
    channel_id: '',
    id: '',
    status: '',
    action: '',
    platform: '',
    start: start.unix(),
    end: dayjs().add(1, 'hour').unix(),
  };
}

export default function TaskLogPage({ kind }: { kind: Kind }) {
  const { t } = useTranslation(TASKLOG_NS);
  const { user } = useUser();
  const { status } = useStatus();
  const admin = isAdmin(user);
  const phone = !Grid.useBreakpoint().md;
  // the filters as typed, and as last queried (the list's)
  const [filters, setFilters] = useState<Filters>(() => initialFilters(kind));
  const [applied, setApplied] = useState<Filters>(filters);
  const [page, setPage] = useState(1);
  const [pageSize, setPageSize] = useState(() => getPageSize());
  const [text, setText] = useState<ShownText | null>(null);
  const [video, setVideo] = useState<TaskRow | null>(null);

  const list = useTaskLog({ kind, admin, filters: applied, page, pageSize });
  const reload = useReloadTaskLog(kind);
  const show = useCallback((title: string, body: string) => setText({ title, body }), []);

  const query = () => {
    // new filters (or another page) are a new query; the same ones again still mean "look again"
    if (page === 1 && JSON.stringify(filters) === JSON.stringify(applied)) return void reload();
    setPage(1);
    setApplied({ ...filters });
  };
  const reset = () => {
    const f = initialFilters(kind);
    setFilters(f);
    setApplied(f);
    setPage(1);
  };
  const turnPage = (p: number, size: number) => {
    if (size !== pageSize) {
      storePageSize(size);
      setPageSize(size);
      setPage(1);
    } else setPage(p);
  };

  return (
    <Card title={t(kind === 'mj' ? 'title.mj' : 'title.task')}>
      {kind === 'mj' && status.mj_notify_enabled === false && admin && (
        <Alert
          type="info"
          showIcon
          style={{ marginBottom: 12 }}
          message={t('callbackOff')}
          data-testid="mj-callback-off"
        />
      )}
      <TaskLogToolbar
        kind={kind}
        admin={admin}
        phone={phone}
        filters={filters}
        onChange={(next) => setFilters((f) => ({ ...f, ...next }))}
        onQuery={query}
        onReset={reset}
      />
      {list.isError && (
        <Alert type="error" showIcon style={{ marginBottom: 12 }} message={list.error.message || t('loadFailed')} />
      )}
      <TaskLogTable
        kind={kind}
        admin={admin}
        phone={phone}
        data={list.data}
        loading={list.isFetching}
        page={page}
        pageSize={pageSize}
        onPage={turnPage}
        show={show}
        play={setVideo}
      />
      <TaskTextModal text={text} phone={phone} onClose={() => setText(null)} />
      <TaskVideoModal row={video} phone={phone} onClose={() => setVideo(null)} />
    </Card>
  );
}
