// The token expiry as a date-time picker (issue 34). The form keeps new-api's text form ("-1" for never, else local
// "YYYY-MM-DD HH:mm:ss") so the shortcuts and checkTokenForm work on it unchanged; clearing the picker means never.
import { DatePicker } from 'antd';
import dayjs from 'dayjs';

const FORMAT = 'YYYY-MM-DD HH:mm:ss';

interface Props {
  value: string;
  onChange(value: string): void;
  /** shown while the value is "-1" */
  neverText: string;
}

export default function ExpiryPicker({ value, onChange, neverText }: Props) {
  const parsed = value.trim() === '-1' ? null : dayjs(value);
  return (
    <DatePicker
      showTime
      format={FORMAT}
      value={parsed?.isValid() ? parsed : null}
      onChange={(d) => onChange(d ? d.format(FORMAT) : '-1')}
      placeholder={neverText}
      allowClear
      name="expired_time"
      style={{ width: '100%' }}
      data-testid="token-expiry"
    />
  );
}
