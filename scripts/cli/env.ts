// The CLI's defaults, set before anything reads the configuration: this module is the CLI's first
// import (imports run before the importing module's own statements, so index.ts cannot set them).
process.env.LOG_LEVEL ??= 'warn'
process.env.LOG_TARGET ??= 'stderr' // stdout is for the command's own output
