// The field of an open drawer, once the drawer has finished loading what it edits.
import { screen } from '@testing-library/react';
import { vi } from 'vitest';

/**
 * The input named `name` in the open drawer (role dialog), once no spinner covers it: antd 6's Spin marks its root
 * `ant-spin-spinning` while it spins, and a change typed before the edited item's values came would be overwritten
 * by them.
 */
export async function drawerInput(name: string): Promise<HTMLInputElement | HTMLTextAreaElement> {
  const drawer = await screen.findByRole('dialog', {}, { timeout: 5000 });
  return vi.waitFor(
    () => {
      const el = drawer.querySelector<HTMLInputElement | HTMLTextAreaElement>(`[name="${name}"]`);
      if (!el || el.closest('.ant-spin-spinning')) throw new Error('the drawer is still loading');
      return el;
    },
    { timeout: 5000 },
  );
}
