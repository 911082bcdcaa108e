// Table column visibility, remembered in localStorage (channels-table-columns, logs-table-columns: new-api-compat.md
// §11.4).
import { useCallback, useState } from 'react';
import { Button, Checkbox, Popover, Space } from 'antd';
import { SettingOutlined } from '@ant-design/icons';

export interface ColumnOption {
  key: string;
  title: string;
}

function readVisibility(storageKey: string, keys: string[]): Record<string, boolean> {
  const out: Record<string, boolean> = Object.fromEntries(keys.map((k) => [k, true]));
  try {
    const raw = localStorage.getItem(storageKey);
    if (!raw) return out;
    const saved = JSON.parse(raw) as Record<string, unknown>;
    for (const k of keys) if (typeof saved[k] === 'boolean') out[k] = saved[k] as boolean;
  } catch {
    /* corrupt preference: show everything */
  }
  return out;
}

export function useColumnVisibility(storageKey: string, keys: string[]) {
  const [visible, setVisible] = useState(() => readVisibility(storageKey, keys));
  const update = useCallback(
    (next: Record<string, boolean>) => {
      setVisible(next);
      localStorage.setItem(storageKey, JSON.stringify(next));
    },
    [storageKey],
  );
  const isVisible = useCallback((key: string) => visible[key] !== false, [visible]);
  return { visible, update, isVisible };
}

export function ColumnSettings(props: {
  options: ColumnOption[];
  visible: Record<string, boolean>;
  onChange(next: Record<string, boolean>): void;
  label: string;
  resetLabel: string;
}) {
  const { options, visible, onChange } = props;
  const content = (
    <Space orientation="vertical" data-testid="column-settings">
      {options.map((o) => (
        <Checkbox
          key={o.key}
          checked={visible[o.key] !== false}
          onChange={(e) => onChange({ ...visible, [o.key]: e.target.checked })}
        >
          {o.title}
        </Checkbox>
      ))}
      <Button size="small" onClick={() => onChange(Object.fromEntries(options.map((o) => [o.key, true])))}>
        {props.resetLabel}
      </Button>
    </Space>
  );
  return (
    <Popover content={content} trigger="click" placement="bottomRight">
      <Button icon={<SettingOutlined />}>{props.label}</Button>
    </Popover>
  );
}
