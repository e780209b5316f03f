public enum AmodbSandboxPlaceholder {}
