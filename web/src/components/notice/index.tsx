// After login, shows the announcement once per content (new-api-compat.md §11.5). Rendered by the signed-in route
// guard; renders nothing unless there is a new announcement. No props.
import { lazy, Suspense, useState } from 'react';
import { useQuery } from '@tanstack/react-query';
import { fetchNotice, NOTICE_QUERY_KEY, noticePending, rememberDismissed } from './logic.js';

const NoticeModal = lazy(() => import('./NoticeModal.js'));

export default function NoticeGate() {
  const { data } = useQuery({ queryKey: NOTICE_QUERY_KEY, queryFn: fetchNotice, staleTime: 5 * 60_000 });
  const [dismissed, setDismissed] = useState<string | null>(null);
  if (!noticePending(data) || dismissed === data) return null;
  return (
    <Suspense fallback={null}>
      <NoticeModal
        content={data}
        onClose={() => {
          rememberDismissed(data);
          setDismissed(data);
        }}
      />
    </Suspense>
  );
}
