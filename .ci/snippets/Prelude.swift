// Compiled with each documentation snippet by .ci/check-snippets. Deliberately empty: a snippet compiles
// as a client would paste it, with only what it imports and declares. One that shows UIKit code imports
// UIKit, and is type-checked against the Apple SDKs (Linux has no UIKit; stand-ins here would let a snippet
// that forgot `import UIKit` pass).
