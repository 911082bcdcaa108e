// The quota field in both display modes: dollars with the quota units beside, or raw quota units.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { cleanup, fireEvent, render, screen } from '@testing-library/react';
import i18n from '../../i18n/index.js';
import QuotaInput from './QuotaInput.js';
import { dollarsToQuota, quotaToDollarValue } from './logic.js';

afterEach(() => {
  cleanup();
  localStorage.clear();
});

describe('quota conversions', () => {
  it('rounds dollars to whole quota units and shows dollars without binary noise', () => {
    expect(dollarsToQuota(0.1, 500000)).toBe(50000);
    expect(dollarsToQuota(1.005, 500000)).toBe(502500);
    expect(quotaToDollarValue(50000, 500000)).toBe(0.1);
    expect(quotaToDollarValue(1, 500000)).toBe(0.000002);
  });
});

describe('QuotaInput', () => {
  it('in currency mode takes dollars and reports quota units, showing them beside', async () => {
    await i18n.changeLanguage('en');
    localStorage.setItem('quota_per_unit', '500000');
    localStorage.setItem('display_in_currency', 'true');
    const onChange = vi.fn();
    render(<QuotaInput value={1000000} onChange={onChange} presets={[5000000]} data-testid="q" />);
    const input = screen.getByTestId('q') as HTMLInputElement;
    expect(input.value).toBe('2');
    expect(screen.getByTestId('q-units').textContent).toBe('= 1,000,000 quota');
    fireEvent.change(input, { target: { value: '0.25' } });
    expect(onChange).toHaveBeenLastCalledWith(125000);
    fireEvent.click(screen.getByText('$10'));
    expect(onChange).toHaveBeenLastCalledWith(5000000);
  });

  it('with currency display off takes quota units as they are', async () => {
    await i18n.changeLanguage('en');
    localStorage.setItem('display_in_currency', 'false');
    const onChange = vi.fn();
    render(<QuotaInput value={1000000} onChange={onChange} data-testid="q" />);
    const input = screen.getByTestId('q') as HTMLInputElement;
    expect(input.value).toBe('1000000');
    expect(screen.queryByTestId('q-units')).toBeNull();
    expect(screen.getByText('quota')).toBeTruthy();
    fireEvent.change(input, { target: { value: '42' } });
    expect(onChange).toHaveBeenLastCalledWith(42);
  });
});
