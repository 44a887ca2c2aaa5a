<?php

// The client without Composer: `require __DIR__ . '/autoload.php';` maps the
// SmsApi\ namespace onto src/ exactly as composer.json's PSR-4 entry does.

declare(strict_types=1);

spl_autoload_register(static function (string $class): void {
    $prefix = 'SmsApi\\';
    if (strncmp($class, $prefix, strlen($prefix)) !== 0) {
        return;
    }
    $file = __DIR__ . '/src/' . str_replace('\\', '/', substr($class, strlen($prefix))) . '.php';
    if (is_file($file)) {
        require $file;
    }
});
