import { describe, expect, it } from 'vitest';
import { render, screen, waitFor } from '@testing-library/react';
import RichContent, { contentKind } from './RichContent.js';

describe('RichContent', () => {
  it('tells URLs, HTML and Markdown apart', () => {
    expect(contentKind(' https://example.com/page ')).toBe('url');
    expect(contentKind('<h1>x</h1>')).toBe('html');
    expect(contentKind('# title')).toBe('markdown');
  });

  it('renders Markdown once the renderer has loaded', async () => {
    const { container } = render(<RichContent content={'# Welcome\n\nsome **bold** text'} />);
    await waitFor(() => expect(screen.getByRole('heading', { name: 'Welcome' })).toBeTruthy());
    expect(container.querySelector('strong')?.textContent).toBe('bold');
  });

  it('shows HTML as it is, without waiting for the Markdown renderer', () => {
    const { container } = render(<RichContent content="<p id='x'>hello</p>" />);
    expect(container.querySelector('#x')?.textContent).toBe('hello');
  });
});
