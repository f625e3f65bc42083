// What the pages use of typage (npm package age-encryption) and of the
// libraries it is built on, bundled by scripts/vendor-age into one script
// that defines the global `ageEncryption`. X25519Identity is typage's own
// class, reached by its file (the package exports only its index): the
// page wraps it to read the file name a link's file carries.
export { generateX25519Identity, identityToRecipient, Encrypter, Decrypter, Stanza } from "age-encryption";
export { X25519Identity } from "./node_modules/age-encryption/dist/recipients.js";
export { chacha20poly1305 } from "@noble/ciphers/chacha.js";
export { hkdf } from "@noble/hashes/hkdf.js";
export { sha256 } from "@noble/hashes/sha2.js";
