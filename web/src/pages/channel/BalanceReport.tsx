// What "update balances of all enabled channels" found (issue 34): the server lists the channels it could not update
// and why; the page shows them instead of a blanket success. An older server that sends no report reads as "all done".
import { List, Typography } from 'antd';
import type { TFunction } from 'i18next';

export interface BalanceReport {
  updated: number;
  failed: { id: number; name: string; message: string }[];
}

/** The report in an answer's data, or null when the server sent none. */
export function readBalanceReport(data: unknown): BalanceReport | null {
  if (!data || typeof data !== 'object') return null;
  const d = data as Partial<BalanceReport>;
  if (!Array.isArray(d.failed)) return null;
  return { updated: Number(d.updated) || 0, failed: d.failed };
}

export function BalanceFailures({ report, t }: { report: BalanceReport; t: TFunction }) {
  return (
    <>
      <Typography.Paragraph>
        {t('balances.summary', { updated: report.updated, failed: report.failed.length })}
      </Typography.Paragraph>
      <List
        size="small"
        bordered
        dataSource={report.failed}
        data-testid="balance-failures"
        renderItem={(f) => (
          <List.Item>
            <Typography.Text strong>{`${f.name} (#${f.id})`}</Typography.Text>
            <Typography.Text type="danger" style={{ marginLeft: 8 }}>
              {f.message}
            </Typography.Text>
          </List.Item>
        )}
      />
    </>
  );
}
