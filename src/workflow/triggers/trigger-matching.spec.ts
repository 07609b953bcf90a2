import type { DomainEvent } from '../../events/domain-event';
import {
  namedRunAsUsers,
  originRunOf,
  runAsUserOf,
  triggeredRunInput,
  triggerInterests,
  triggerOn,
  type TriggeredWorkflow,
} from './trigger-matching';

const FORM = '3f1c2a55-0000-4000-8000-000000000001';
const OTHER = '3f1c2a55-0000-4000-8000-000000000002';
const SITE = '3f1c2a55-0000-4000-8000-0000000000aa';

function event(overrides: Partial<DomainEvent> = {}): DomainEvent {
  return {
    id: 'e1',
    type: 'record.created',
    occurredAt: new Date(0),
    siteId: null,
    configId: FORM,
    actorId: 'u1',
    origin: { kind: 'route', route: 'POST /api/data/:configId' },
    data: { record: { _id: 'r1', data: { name: 'Ann' } } },
    ...overrides,
  };
}

const workflow = (triggers: unknown, siteId: string | null = null): TriggeredWorkflow => ({
  id: 'w1',
  siteId,
  config: { triggers },
  authorId: 'author1',
});
const triggersOn = (w: TriggeredWorkflow, e: DomainEvent) => triggerOn(w, e) !== null;

describe('trigger matching', () => {
  it('matches the event type, and the configId when the trigger names one', () => {
    expect(triggersOn(workflow([{ event: 'record.created' }]), event())).toBe(true);
    expect(triggersOn(workflow([{ event: 'record.created', configId: FORM }]), event())).toBe(true);
    expect(triggersOn(workflow([{ event: 'record.created', configId: OTHER }]), event())).toBe(false);
    expect(triggersOn(workflow([{ event: 'record.updated' }]), event())).toBe(false);
    expect(triggersOn(workflow(undefined), event())).toBe(false);
    expect(triggersOn(workflow([null, 'x']), event())).toBe(false);
  });

  it('reads a null configId as any configuration, in matching and in the interests it declares', () => {
    const anyForm = workflow([{ event: 'record.created', configId: null }, { event: 'no.such' }, 'junk']);
    expect(triggersOn(anyForm, event({ configId: OTHER }))).toBe(true);
    expect(triggerInterests(anyForm.config)).toEqual([{ type: 'record.created', configId: null }]);
    expect(triggerInterests(workflow([{ event: 'record.updated', configId: FORM }]).config)).toEqual([
      { type: 'record.updated', configId: FORM },
    ]);
  });

  it("takes a site's workflow only for that site's events", () => {
    expect(triggersOn(workflow([{ event: 'record.created' }], SITE), event())).toBe(false);
    expect(triggersOn(workflow([{ event: 'record.created' }], SITE), event({ siteId: SITE }))).toBe(true);
    expect(triggersOn(workflow([{ event: 'record.created' }]), event({ siteId: SITE }))).toBe(true);
  });

  it('reads whom a trigger runs as: the owner by default, the author, or a named user', () => {
    const runAsIn = (runAs: unknown) =>
      triggerOn(workflow([{ event: 'record.created', runAs }]), event())?.runAs;
    expect(runAsIn(undefined)).toBe('owner');
    expect(runAsIn('author')).toBe('author');
    expect(runAsIn({ user: 'u9' })).toEqual({ user: 'u9' });
    const owned = event({ actorId: 'admin1', data: { record: { _id: 'r1', userId: 'owner1', data: {} } } });
    // The record's owner, not whoever made the change (an admin fixing a typo).
    expect(runAsUserOf('owner', owned, 'author1')).toBe('owner1');
    expect(runAsUserOf('owner', event({ type: 'workflow.run.finished', actorId: 'u2' }), null)).toBe('u2');
    expect(runAsUserOf('owner', event(), null)).toBeNull();
    expect(runAsUserOf('author', owned, 'author1')).toBe('author1');
    expect(runAsUserOf('author', owned, null)).toBeNull();
    expect(runAsUserOf({ user: 'u9' }, owned, 'author1')).toBe('u9');
    expect(
      namedRunAsUsers({
        triggers: [{ event: 'record.created', runAs: { user: 'u9' } }, { runAs: 'author' }],
      }),
    ).toEqual(['u9']);
  });

  it('starts a record event with its data as input and the record as savedData; a finished run with the run', () => {
    expect(triggeredRunInput(event())).toEqual({
      body: { configId: FORM, data: { name: 'Ann' } },
      savedData: { _id: 'r1', data: { name: 'Ann' } },
    });
    const run = { id: 'run1', status: 'success' };
    expect(triggeredRunInput(event({ type: 'workflow.run.finished', data: { run } }))).toEqual({
      body: { configId: FORM, data: run },
    });
    expect(triggeredRunInput(event({ configId: null }))).toBeNull();
    expect(triggeredRunInput(event({ data: { record: 'x' } }))).toBeNull();
  });

  it("names the run an event came from: a run's save, or the run that finished", () => {
    expect(originRunOf(event())).toBeNull();
    expect(originRunOf(event({ origin: { kind: 'workflow', runId: 'run7', step: 'save' } }))).toBe('run7');
    expect(
      originRunOf(event({ type: 'workflow.run.finished', origin: null, data: { run: { id: 'run8' } } })),
    ).toBe('run8');
  });
});
