export * from './accounts'
export * from './catalog'
export * from './events'
export * from './retailers'
