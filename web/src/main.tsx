import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { RouterProvider } from 'react-router';
import { languageReady } from './i18n/index.js';
import './styles.css';
import { AppProviders } from './App.js';
import { createRouter } from './routes.js';

const router = createRouter();

// a language other than zh and en has its texts fetched first: the first render is in it, with no keys shown
void languageReady.then(() =>
  createRoot(document.getElementById('root')!).render(
    <StrictMode>
      <AppProviders>
        <RouterProvider router={router} />
      </AppProviders>
    </StrictMode>,
  ),
);
