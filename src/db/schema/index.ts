export * from './accounts'
export * from './events'
export * from './retailers'
