// htm turns tagged templates into Preact elements at run time without eval, so the page runs
// under script-src 'self' with no build-time JSX step.
import { h } from 'preact';
import htm from 'htm';

export const html = htm.bind(h);
