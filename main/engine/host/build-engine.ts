// An Engine over the standard backends: what the daemon, the app and the tests build.
import { Engine, type EngineConfig } from '../engine.js';
import { standardBackends, type StandardBackendOptions } from './backends.js';

export type BuildEngineConfig = Omit<EngineConfig, 'backends'> & StandardBackendOptions;

export function buildEngine(cfg: BuildEngineConfig): Engine {
  const { replace, local, slurm, ...rest } = cfg;
  return new Engine({ ...rest, backends: standardBackends({ replace, local, slurm }) });
}
