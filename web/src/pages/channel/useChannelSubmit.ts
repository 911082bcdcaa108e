// The editor's save (spec §5 channel form rules, §8 duplicate-submit errors): the form's own checks, the server's
// check of the typed fields (POST /api/channel/check), the /v1 confirmation, then the create or update; a save
// invalidates the channel lists.
import { useRef, useState } from 'react';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useTranslation } from 'react-i18next';
import { App as AntApp } from 'antd';
import { api, failureText } from '../../lib/api.js';
import type { MultiKeyChoice } from './MultiKeyFields.js';
import { createBody, multiKeyEdit, type ChannelInfo } from './multi-key.js';
import { checkChannelForm, type ChannelFormValues } from './logic.js';
import { CHANNELS_KEY } from './queries.js';

/** The field POST /api/channel/check names when it refuses the form. */
export type RefusedField = 'key' | 'base_url' | 'other';

export function useChannelSubmit(p: {
  values: ChannelFormValues;
  editId: number | undefined;
  /** the edited channel's key state (a multi-key channel's edit sends the keys as `multi.keyMode` says) */
  loadedInfo: ChannelInfo | null;
  multi: MultiKeyChoice;
  /** the field the server's check refused, to mark */
  onRefusedField(field: RefusedField | undefined): void;
  onSaved(): void;
}) {
  const { values, editId, loadedInfo, multi, onRefusedField, onSaved } = p;
  const isEdit = editId !== undefined;
  const { t } = useTranslation('channel');
  const { message, modal } = AntApp.useApp();
  const qc = useQueryClient();
  const [saving, setSaving] = useState(false);
  // The button stays clickable while saving so a second submit can be refused with a message (spec §8); the ref
  // is the guard because it changes synchronously, before React re-renders.
  const submittingRef = useRef(false);

  // the server's check of the typed fields, then the save; a save reloads the channel lists
  const checkFields = useMutation({
    mutationFn: (body: Record<string, unknown>) =>
      api.post<{ field?: RefusedField } | undefined>('/api/channel/check', body),
  });
  const save = useMutation({
    mutationFn: (v: { edit: boolean; body: unknown }) =>
      v.edit ? api.put('/api/channel/', v.body) : api.post('/api/channel/', v.body),
    onSuccess: (res) => {
      if (res.success) void qc.invalidateQueries({ queryKey: CHANNELS_KEY });
    },
  });

  const submit = async () => {
    if (submittingRef.current) {
      message.error(t('err.duplicateSubmit'));
      return;
    }
    const check = checkChannelForm(values, editId);
    if (!check.ok) {
      message.error(t(check.error, check.params));
      return;
    }
    submittingRef.current = true;
    setSaving(true);
    try {
      // the provider's rules for its fields are the server's (the same a save applies): asked before saving, so the
      // refusal shows (and the field it names is marked) before anything is written
      const { type, key, base_url, other } = check.payload;
      const verdict = await checkFields.mutateAsync({
        type,
        key,
        base_url,
        other,
        // a key list (batch, multi-key; Vertex AI's JSON array) is checked key by key
        mode: isEdit ? (loadedInfo?.is_multi_key ? 'multi_to_single' : 'single') : multi.addMode,
      });
      if (!verdict.success) {
        onRefusedField(verdict.data?.field);
        message.error(failureText(verdict, isEdit ? 'error.updateFailed' : 'error.saveFailed'));
        return;
      }
      if (check.confirmV1) {
        const go = await modal.confirm({
          title: t('v1.title'),
          content: t('v1.content'),
          okText: t('action.confirm'),
          cancelText: t('action.cancel'),
        });
        if (!go) return;
      }
      const res = await save.mutateAsync(
        isEdit
          ? {
              edit: true,
              body: loadedInfo?.is_multi_key ? multiKeyEdit(check.payload, multi.mkMode, multi.keyMode) : check.payload,
            }
          : { edit: false, body: createBody(check.payload, multi.addMode, multi.mkMode) },
      );
      if (res.success) {
        message.success(t(isEdit ? 'msg.updated' : 'msg.created'));
        onSaved();
      } else message.error(failureText(res, isEdit ? 'error.updateFailed' : 'error.saveFailed'));
    } catch {
      /* toasted by api */
    } finally {
      submittingRef.current = false;
      setSaving(false);
    }
  };

  return { submit, saving };
}
