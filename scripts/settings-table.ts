import { SettingsSchema } from '../config/settings.js';
import { commandLine } from './cli.js';

/**
 * Prints the settings table of docs/CONFIGURATION.md from the schema in config/settings.ts.
 *   node dist/scripts/settings-table.js
 */
export function settingsTable(): string {
  const required = new Set<string>(SettingsSchema.required ?? []);
  const rows = Object.entries(SettingsSchema.properties).map(([name, schema]) => {
    const s = schema as {
      default?: unknown;
      description?: string;
      pattern?: string;
      anyOf?: Array<{ const?: unknown }>;
      minimum?: number;
      maximum?: number;
      minLength?: number;
      type?: string;
    };
    const values = s.anyOf
      ? s.anyOf.map((a) => String(a.const)).join(' \\| ')
      : s.type === 'integer'
        ? `integer${s.minimum !== undefined ? ` >= ${s.minimum}` : ''}${s.maximum !== undefined ? `, <= ${s.maximum}` : ''}`
        : s.minLength && s.minLength > 1
          ? `string of >= ${s.minLength} characters`
          : 'string';
    const def = s.default === undefined ? (required.has(name) ? 'required' : '(unset)') : `\`${String(s.default)}\``;
    return `| \`${name}\` | ${values} | ${def} | ${s.description ?? ''} |`;
  });
  return ['| variable | values | default | meaning |', '|---|---|---|---|', ...rows].join('\n');
}

if (import.meta.url === `file://${process.argv[1]}`) {
  commandLine({ summary: 'Prints the settings table of docs/CONFIGURATION.md (Markdown).', options: {} });
  console.log(settingsTable());
}
