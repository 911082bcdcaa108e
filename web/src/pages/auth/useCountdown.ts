import { useEffect, useState } from 'react';

/** A seconds countdown (used for the 30 s resend / retry cooldowns). start(n) begins, left is 0 when idle. */
export function useCountdown(): { left: number; start(seconds: number): void } {
  const [left, setLeft] = useState(0);
  useEffect(() => {
    if (left <= 0) return;
    const id = setTimeout(() => setLeft((n) => n - 1), 1000);
    return () => clearTimeout(id);
  }, [left]);
  return { left, start: setLeft };
}
