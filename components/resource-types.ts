// The custom resource types of reprobench's provider plugin (plugin/index.ts serves them) and the type they
// had as dynamic resources, which state written before the plugin still holds until its next `up`.
// No imports: the CLI reads states with these without loading the components, and the implementations
// import it without importing the plugin's dispatcher.

/** A bash script run on a host over SSH and checked on refresh (components/checked-command.ts). */
export const HOST_SCRIPT_TYPE = "reprobench:index:HostScript";
/** A Harbor job's name, fixed when the job is created (components/benchmark-run.ts). */
export const JOB_NAME_TYPE = "reprobench:index:JobName";
/** What both were before the plugin: `pulumi.dynamic.Resource`s, their provider code kept in the state. */
export const LEGACY_DYNAMIC_TYPE = "pulumi-nodejs:dynamic:Resource";

/** Whether a state resource's type is a host script, as the plugin or as the dynamic resource before it. */
export function isHostScriptType(type: string): boolean {
  return type === HOST_SCRIPT_TYPE || type === LEGACY_DYNAMIC_TYPE;
}

/* eslint-disable @typescript-eslint/no-explicit-any -- each implementation types its own state */
/**
 * A custom resource's implementation as the plugin calls it (components/provider.ts): plain property
 * values in, plain values out (the plugin handles secrets and the URN).
 */
export interface ResourceImplementation {
  create(inputs: any): Promise<{ id: string; outs?: any }>;
  read?(id: string, props: any): Promise<{ id?: string; props?: any }>;
  update?(id: string, olds: any, news: any): Promise<{ outs?: any }>;
  diff(id: string, olds: any, news: any): Promise<{ changes?: boolean; replaces?: string[]; deleteBeforeReplace?: boolean }>;
  delete?(id: string, props: any): Promise<void>;
}
/* eslint-enable @typescript-eslint/no-explicit-any */
